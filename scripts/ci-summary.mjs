#!/usr/bin/env node
// Computes the one line CI reads, "N passed, N failed" (", N skipped" when tests were skipped or
// todo), from the reports scripts/vitest-summary-reporter.mjs wrote and the exit codes of the
// other checks, and exits non-zero whenever anything failed. The line can only read green when
// every expected report exists and shows no failure of any kind:
//   - a failed test, a test left pending (the run stopped under it);
//   - an error outside a test: a throwing beforeAll/afterAll, a file that fails to load,
//     an unhandled error or rejection;
//   - a report that is missing, unreadable or from an interrupted run;
//   - a report whose run vitest itself called failed, or a non-zero exit of the test command,
//     when nothing above explains it (counted as one failure so the line cannot read green);
//   - a failed check (typecheck, lint, pack smoke test), one failure each; a passed one counts
//     as one passed.
//
//   node scripts/ci-summary.mjs [--report <summary.json>]... [--status <test exit code>]
//                               [--check <name>=<exit code>]...
// Without --report it reads the report of every package (packages/<name>/test-results/summary.json;
// a package without a `test` script leaves none and so fails) and of the CI tooling
// (scripts/test-results/summary.json).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const SUMMARY_FORMAT = "podkit-vitest-summary/1";
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The reports a full run must leave: one per package (each must have a `test` script), and the tooling's. */
export function expectedReports(repoRoot = REPO_ROOT) {
  const reports = [];
  const packagesDir = join(repoRoot, "packages");
  for (const name of readdirSync(packagesDir).sort()) {
    const manifestPath = join(packagesDir, name, "package.json");
    if (existsSync(manifestPath)) reports.push(join(packagesDir, name, "test-results/summary.json"));
  }
  reports.push(join(repoRoot, "scripts/test-results/summary.json"));
  return reports;
}

function readReport(path, shown) {
  let report;
  try {
    report = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const why =
      error.code === "ENOENT"
        ? "is missing: the package has no `test` script, or its test run did not finish"
        : `is unreadable: ${error.message}`;
    return { problem: `test report ${shown} ${why}` };
  }
  if (report?.format !== SUMMARY_FORMAT || !Array.isArray(report.tests) || !Array.isArray(report.errors)) {
    return { problem: `test report ${shown} is not a ${SUMMARY_FORMAT} report` };
  }
  return { report };
}

/**
 * Counts reports and checks. `reports` are paths; `checks` maps a check name to its exit code;
 * `status` is the exit code of the test command (null when unknown). Returns the counts and one
 * human-readable line per failure.
 */
export function summarize({ reports, checks = {}, status = null, relativeTo = REPO_ROOT }) {
  let passed = 0;
  let skipped = 0;
  const failures = [];
  for (const path of reports) {
    const { report, problem } = readReport(path, relative(relativeTo, path));
    if (problem) {
      failures.push(problem);
      continue;
    }
    const where = relative(relativeTo, path);
    // A report sits in <package>/test-results/ and names files from the package; failures name
    // them from the repository root.
    const packageDir = relative(relativeTo, dirname(dirname(path))) || ".";
    const at = (file) => join(packageDir, file);
    const before = failures.length;
    for (const test of report.tests) {
      if (test.state === "passed") passed += 1;
      else if (test.state === "skipped" || test.state === "todo") skipped += 1;
      else if (test.state === "pending")
        failures.push(`test did not finish: ${at(test.file)} > ${test.name}`);
      else failures.push(`test failed: ${at(test.file)} > ${test.name}`);
    }
    for (const error of report.errors) {
      if (error.kind === "module") failures.push(`test file failed: ${at(error.where)}: ${error.message}`);
      else if (error.kind === "suite")
        failures.push(`suite hook failed: ${at(error.where)}: ${error.message}`);
      else failures.push(`unhandled error in ${packageDir}: ${error.message}`);
    }
    if (report.reason === "interrupted") failures.push(`test run was interrupted (${where})`);
    else if (report.reason !== "passed" && failures.length === before) {
      failures.push(`vitest reported the run as ${report.reason} without a failing test (${where})`);
    }
  }
  if (status !== null && status !== 0 && failures.length === 0) {
    failures.push(`the test command exited ${status} but no report shows a failure`);
  }
  for (const [name, code] of Object.entries(checks)) {
    if (code === 0) passed += 1;
    else failures.push(`check failed: ${name} (exit ${code})`);
  }
  return { passed, failed: failures.length, skipped, failures };
}

/** The closing line: exactly "N passed, N failed", plus ", N skipped" when any were skipped. */
export function summaryLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
}

/** Prints each failure, then the closing line last; returns the exit code (1 when anything failed). */
export function printSummary(counts) {
  for (const failure of counts.failures.slice(0, 50)) console.log(`FAILED ${failure}`);
  if (counts.failures.length > 50) console.log(`... and ${counts.failures.length - 50} more failures`);
  console.log(summaryLine(counts));
  return counts.failed > 0 ? 1 : 0;
}

function parseExitCode(text, what) {
  if (!/^\d+$/.test(text)) throw new Error(`ci-summary: ${what} must be an exit code, got "${text}"`);
  return Number(text);
}

function main() {
  const { values } = parseArgs({
    options: {
      report: { type: "string", multiple: true },
      status: { type: "string" },
      check: { type: "string", multiple: true },
    },
  });
  const checks = {};
  for (const entry of values.check ?? []) {
    const at = entry.lastIndexOf("=");
    if (at <= 0) throw new Error(`ci-summary: --check takes <name>=<exit code>, got "${entry}"`);
    checks[entry.slice(0, at)] = parseExitCode(entry.slice(at + 1), `--check ${entry.slice(0, at)}`);
  }
  const status = values.status === undefined ? null : parseExitCode(values.status, "--status");
  process.exitCode = printSummary(summarize({ reports: values.report ?? expectedReports(), checks, status }));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main();
  } catch (error) {
    console.error(error.message);
    console.log("0 passed, 1 failed");
    process.exitCode = 2;
  }
}
