#!/usr/bin/env node
// The test command (`npm test` runs it after scripts/setup.mjs): every package's own `test`
// script through turbo, so each package builds and tests in dependency order and an unchanged
// package replays its cached result, plus the CI tooling's tests; then one line for the whole
// run from the per-package reports (scripts/ci-summary.mjs). Exits non-zero when anything failed.
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { expectedReports, printSummary, summarize } from "./ci-summary.mjs";
import { ensurePostgresBinaries } from "./ensure-postgres.mjs";
import { runPnpm } from "./pnpm-command.mjs";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const reports = expectedReports(repoRoot);
// A report left by an earlier run must never stand in for this one; turbo restores the reports
// of cached tasks from its cache.
for (const report of reports) rmSync(dirname(report), { recursive: true, force: true });

// @podkit/store-postgres tests need a real server; its test setup starts a throwaway cluster
// from the distribution's binaries, which a fresh machine may not have yet.
ensurePostgresBinaries();

// One package at a time: each vitest already spreads its files over parallel forks, and the crash,
// lock and cancellation tests are timing-sensitive on a small machine (two packages at once made
// them time out on 2 cores).
const status = runPnpm(
  ["exec", "turbo", "run", "test", "test:scripts", "--concurrency=1", "--continue", "--output-logs=new-only"],
  { cwd: repoRoot },
);
process.exitCode = printSummary(summarize({ reports, status }));
