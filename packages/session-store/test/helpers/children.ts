import { type ChildProcess, spawn } from "node:child_process";
import { childScript } from "./built-package.js";

/** A helper process under test control: send lines to its stdin, await the lines it prints. */
export interface Child {
  child: ChildProcess;
  send(line: string): void;
  next(): Promise<string>;
  /** Sends `line` and parses the JSON line that answers it. */
  ask<T = Record<string, unknown>>(line: string): Promise<T>;
  exited: Promise<void>;
}

/** Spawns `node test/helpers/<script> ...args`. */
export function spawnChild(script: string, args: string[]): Child {
  const child = spawn(process.execPath, [childScript(script), ...args], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  const stderr: string[] = [];
  let buffered = "";
  let waiting: (() => void) | undefined;
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    lines.push(...parts);
    waiting?.();
  });
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  exited.then(() => waiting?.());
  let read = 0;
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (read < lines.length) {
          waiting = undefined;
          resolve(lines[read++] as string);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          reject(new Error(`${script} exited: ${stderr.join("")}`));
        } else {
          waiting = check;
        }
      };
      check();
    });
  const send = (line: string) => child.stdin?.write(`${line}\n`);
  return {
    child,
    send,
    next,
    ask: async <T>(line: string) => {
      send(line);
      return JSON.parse(await next()) as T;
    },
    exited,
  };
}
