import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** A child process under test control: send lines to its stdin, await the lines it prints. */
export interface Child {
  child: ChildProcess;
  send(line: string): void;
  /** The next line printed; rejects when the process exits first. */
  next(): Promise<string>;
  exited: Promise<void>;
}

/** Spawns `node test/helpers/<script> ...args` (needs the package built: the script imports dist/). */
export function spawnChild(script: string, args: string[]): Child {
  if (!existsSync(join(packageDir, "dist", "index.js"))) {
    throw new Error(
      "packages/store-postgres/dist is missing: run `pnpm --filter @podkit/store-postgres build` first",
    );
  }
  const child = spawn(process.execPath, [join(packageDir, "test", "helpers", script), ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
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
          reject(new Error(`${script} exited (${child.exitCode ?? child.signalCode}): ${stderr.join("")}`));
        } else {
          waiting = check;
        }
      };
      check();
    });
  return { child, send: (line) => child.stdin?.write(`${line}\n`), next, exited };
}
