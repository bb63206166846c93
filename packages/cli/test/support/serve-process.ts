import { type ChildProcess, spawn } from "node:child_process";
import { BIN } from "../run-bin.js";

/** A `podkit serve` child process and the URL it listens on. */
export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** What it wrote to stderr so far (warnings, errors). */
  stderr(): string;
  /** Ctrl-C (SIGINT), then waits for the exit (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
}

/** Starts `podkit serve --port 0 ...args` in `cwd` with only PATH and `env`; resolves once it listens. */
export function startServe(
  cwd: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk) => {
    err += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`podkit serve did not start in 60 s: ${out}${err}`)),
      60_000,
    );
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`podkit serve exited with ${code}: ${out}${err}`));
    });
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      resolve({
        url,
        child,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode !== null) return child.exitCode;
          child.kill("SIGINT");
          const timeout = setTimeout(() => child.kill("SIGKILL"), 10_000);
          const code = await exited;
          clearTimeout(timeout);
          return code;
        },
      });
    });
  });
}
