#!/usr/bin/env node
// Runs every `bench/*.bench.mjs` in its own child process, one after another, and passes
// their output through. Each script prints its figures as `BENCH <name> <value> <unit>`.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
const scripts = readdirSync(here)
  .filter((f) => f.endsWith(".bench.mjs") && (!only || f.includes(only)))
  .sort();
let failed = 0;
for (const script of scripts) {
  console.log(`# ${script}`);
  const res = spawnSync(process.execPath, ["--expose-gc", join(here, script)], { stdio: "inherit" });
  if (res.status !== 0) {
    failed++;
    console.error(`# ${script} failed (exit ${res.status})`);
  }
}
process.exit(failed ? 1 : 0);
