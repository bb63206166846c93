// How the root scripts call pnpm on a machine that may have only Node 20 and npm: the pnpm on
// PATH when it is the pinned version, else the pinned version through npx.
import { spawnSync } from "node:child_process";

export const PNPM_VERSION = "12.4.2";
export const TOOL_ENV = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" };

let cached;

/** `[command, leadingArgs]` that runs the pinned pnpm. */
export function pnpmCommand() {
  if (cached) return cached;
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8", env: TOOL_ENV });
  cached =
    probe.status === 0 && probe.stdout.trim() === PNPM_VERSION
      ? ["pnpm", []]
      : ["npx", ["-y", `pnpm@${PNPM_VERSION}`]];
  return cached;
}

/** Runs pnpm with inherited output; returns its exit code (1 when it could not start). */
export function runPnpm(args, options = {}) {
  const [cmd, prefix] = pnpmCommand();
  const result = spawnSync(cmd, [...prefix, ...args], { stdio: "inherit", env: TOOL_ENV, ...options });
  if (result.error) console.error(`cannot run pnpm: ${result.error.message}`);
  return result.status ?? 1;
}
