#!/usr/bin/env node
// Brings a fresh clone to a runnable state with nothing but Node 20 and npm:
// finds pnpm 12.4.2 (or fetches it through npx), installs the locked dependencies, builds.
// Idempotent and quick when everything is already in place.
import { execFileSync, spawnSync } from "node:child_process";

const PNPM_VERSION = "12.4.2";
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" };

function pnpmCommand() {
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8", env });
  if (probe.status === 0 && probe.stdout.trim() === PNPM_VERSION) return ["pnpm", []];
  return ["npx", ["-y", `pnpm@${PNPM_VERSION}`]];
}

function run(args) {
  const [cmd, prefix] = pnpmCommand();
  try {
    execFileSync(cmd, [...prefix, ...args], { stdio: ["ignore", "inherit", "inherit"], env });
  } catch (error) {
    console.error(`setup: \`pnpm ${args.join(" ")}\` failed (exit ${error.status ?? "?"}).`);
    process.exit(1);
  }
}

run(["install", "--frozen-lockfile", "--reporter=silent"]);
run(["exec", "turbo", "run", "build", "--output-logs=errors-only"]);
