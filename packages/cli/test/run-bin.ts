import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The built `podkit` bin, run exactly as a user runs it (tests need `pnpm build` first). */
export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

/** Repository root, for running the shipped example. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url)).replace(/\/$/, "");

export interface BinResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/bin.js ...args` in a child process with only PATH and the given variables in
 * its environment (so the real home and API keys never leak in).
 */
export function runBin(
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string },
): Promise<BinResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: options.cwd, env: { PATH: process.env.PATH ?? "", ...options.env }, encoding: "utf8" },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    // Piped input (lines of an interactive session); without it stdin is closed at once.
    child.stdin?.end(options.input ?? "");
  });
}
