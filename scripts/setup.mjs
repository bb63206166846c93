#!/usr/bin/env node
// Brings a fresh clone to a runnable state with nothing but Node 20 and npm:
// finds pnpm 12.4.2 (or fetches it through npx), installs the locked dependencies, builds.
// Idempotent and quick when everything is already in place.
import { runPnpm } from "./pnpm-command.mjs";

function run(args) {
  const status = runPnpm(args, { stdio: ["ignore", "inherit", "inherit"] });
  if (status !== 0) {
    console.error(`setup: \`pnpm ${args.join(" ")}\` failed (exit ${status}).`);
    process.exit(1);
  }
}

run(["install", "--frozen-lockfile", "--reporter=silent"]);
run(["exec", "turbo", "run", "build", "--output-logs=errors-only"]);
