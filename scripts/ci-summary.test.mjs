// The CI line is computed from real vitest runs over tiny scratch suites: every report below is
// written by vitest itself through scripts/vitest-summary-reporter.mjs, never by hand.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { expectedReports, summarize, summaryLine } from "./ci-summary.mjs";

const REPORTER = fileURLToPath(new URL("./vitest-summary-reporter.mjs", import.meta.url));
const CI_SUMMARY = fileURLToPath(new URL("./ci-summary.mjs", import.meta.url));
const VITEST_BIN = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");

const scratchDirs = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

/** Writes `files` into a fresh temp dir and runs vitest there with the summary reporter and vitest's own JSON reporter. */
function runScratchSuite(files) {
  const dir = mkdtempSync(join(tmpdir(), "podkit-ci-summary-"));
  scratchDirs.push(dir);
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(
    join(dir, "vitest.config.mjs"),
    `export default { test: { include: ["*.test.mjs"], reporters: [[${JSON.stringify(REPORTER)}, { outputFile: "test-results/summary.json" }], ["json", { outputFile: "test-results/vitest.json" }]] } };\n`,
  );
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  // The outer vitest's worker variables would make the inner one believe it is a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST")));
  const run = spawnSync(process.execPath, [VITEST_BIN, "run", "--root", dir], {
    cwd: dir,
    env: { ...env, CI: "1", NO_COLOR: "1" },
    encoding: "utf8",
  });
  return {
    dir,
    status: run.status,
    report: join(dir, "test-results/summary.json"),
    output: run.stdout + run.stderr,
  };
}

function lineFor(report, options = {}) {
  // Failures name files from the scratch suite's folder, as CI names them from the repository root.
  const counts = summarize({ reports: [report], relativeTo: join(report, "../.."), ...options });
  return { line: summaryLine(counts), counts };
}

const passing = `import { expect, test } from "vitest";
test("one", () => expect(1).toBe(1));
test("two", () => expect(2).toBe(2));
`;

describe("the CI summary line", () => {
  it("reads green with the skipped and todo tests counted apart", () => {
    const run = runScratchSuite({
      "green.test.mjs": `${passing}test.skip("skipped", () => {});\ntest.todo("later");\n`,
    });
    expect(run.status).toBe(0);
    expect(lineFor(run.report).line).toBe("2 passed, 0 failed, 2 skipped");
  });

  it("omits the skipped count when nothing was skipped", () => {
    const run = runScratchSuite({ "green.test.mjs": passing });
    expect(lineFor(run.report).line).toBe("2 passed, 0 failed");
  });

  it("counts a failing afterAll and an unhandled rejection as failures although every test passed", () => {
    const run = runScratchSuite({
      "after-all.test.mjs": `${passing}import { afterAll } from "vitest";\nafterAll(() => { throw new Error("teardown broke"); });\n`,
      "unhandled.test.mjs": `import { test } from "vitest";
test("three", () => { Promise.reject(new Error("nobody awaited this")); });
`,
    });
    expect(run.status).not.toBe(0);
    const { line, counts } = lineFor(run.report);
    expect(line).toBe("3 passed, 2 failed");
    expect(counts.failures).toEqual([
      "test file failed: after-all.test.mjs: teardown broke",
      "unhandled error in .: nobody awaited this",
    ]);

    // Positive control: the formula the old .ci/run applied to vitest's own JSON report of this
    // very run reads green, which is how "3 passed, 0 failed" was printed while vitest exited 1.
    const json = JSON.parse(readFileSync(join(run.dir, "test-results/vitest.json"), "utf8"));
    const oldFailed =
      json.numFailedTests +
      (json.numRuntimeErrorTests ?? 0) +
      json.testResults.filter((file) => file.status === "failed" && file.assertionResults.length === 0)
        .length;
    expect(`${json.numPassedTests} passed, ${oldFailed} failed`).toBe("3 passed, 0 failed");
  });

  it("counts a beforeAll failing in a describe, a file that cannot load and a failing test once each", () => {
    const run = runScratchSuite({
      "before-all.test.mjs": `import { beforeAll, describe, test } from "vitest";
describe("group", () => {
  beforeAll(() => { throw new Error("setup broke"); });
  test("x", () => {});
  test("y", () => {});
});
`,
      "cannot-load.test.mjs": `import "./not-there.mjs";\nimport { test } from "vitest";\ntest("never collected", () => {});\n`,
      "failing.test.mjs": `import { expect, test } from "vitest";\ntest("wrong", () => expect(1).toBe(2));\n`,
    });
    expect(run.status).not.toBe(0);
    const { line, counts } = lineFor(run.report);
    expect(line).toBe("0 passed, 3 failed, 2 skipped");
    expect(counts.failures).toEqual([
      "test failed: failing.test.mjs > wrong",
      "suite hook failed: before-all.test.mjs > group: setup broke",
      expect.stringMatching(/^test file failed: cannot-load\.test\.mjs: .*not-there\.mjs/),
    ]);
  });

  it("is red when a report is missing or the test command failed without a failing report", () => {
    const run = runScratchSuite({ "green.test.mjs": passing });
    const missing = join(run.dir, "other-package/summary.json");
    expect(summaryLine(summarize({ reports: [run.report, missing] }))).toBe("2 passed, 1 failed");
    expect(lineFor(run.report, { status: 1 }).line).toBe("2 passed, 1 failed");
    expect(lineFor(run.report, { status: 0 }).line).toBe("2 passed, 0 failed");
  });

  it("expects a report from every package, so one without a test script cannot drop out of the line", () => {
    const repo = mkdtempSync(join(tmpdir(), "podkit-ci-summary-repo-"));
    scratchDirs.push(repo);
    for (const [name, scripts] of [
      ["tested", { test: "vitest run" }],
      ["untested", {}],
    ]) {
      mkdirSync(join(repo, "packages", name), { recursive: true });
      writeFileSync(join(repo, "packages", name, "package.json"), JSON.stringify({ name, scripts }));
    }
    mkdirSync(join(repo, "packages", "not-a-package"));
    const reports = expectedReports(repo);
    expect(reports).toEqual([
      join(repo, "packages/tested/test-results/summary.json"),
      join(repo, "packages/untested/test-results/summary.json"),
      join(repo, "scripts/test-results/summary.json"),
    ]);
    const { failures } = summarize({ reports: reports.slice(1, 2), relativeTo: repo });
    expect(failures).toEqual([
      "test report packages/untested/test-results/summary.json is missing: the package has no `test` script, or its test run did not finish",
    ]);
  });

  it("counts typecheck, lint and the pack smoke test as one check each", () => {
    const run = runScratchSuite({ "green.test.mjs": passing });
    expect(lineFor(run.report, { checks: { typecheck: 0, lint: 0, "pack smoke": 0 } }).line).toBe(
      "5 passed, 0 failed",
    );
    const red = lineFor(run.report, { checks: { typecheck: 0, lint: 1, "pack smoke": 0 } });
    expect(red.line).toBe("4 passed, 1 failed");
    expect(red.counts.failures).toEqual(["check failed: lint (exit 1)"]);
  });

  it("ends the CLI's output with the line and exits non-zero exactly when something failed", () => {
    const green = runScratchSuite({ "green.test.mjs": passing });
    const red = runScratchSuite({
      "after-all.test.mjs": `${passing}import { afterAll } from "vitest";\nafterAll(() => { throw new Error("teardown broke"); });\n`,
    });
    const cli = (...args) => spawnSync(process.execPath, [CI_SUMMARY, ...args], { encoding: "utf8" });

    const ok = cli("--report", green.report, "--status", "0", "--check", "lint=0");
    expect(ok.status).toBe(0);
    expect(ok.stdout.trimEnd().split("\n").at(-1)).toBe("3 passed, 0 failed");

    const failed = cli("--report", green.report, "--report", red.report, "--status", "1");
    expect(failed.status).toBe(1);
    const lines = failed.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^FAILED test file failed: \S*podkit-ci-summary-\w+\/after-all\.test\.mjs: teardown broke$/,
    );
    expect(lines[1]).toBe("4 passed, 1 failed");

    const typecheckFailed = cli("--report", green.report, "--check", "typecheck=2");
    expect(typecheckFailed.status).toBe(1);
    expect(typecheckFailed.stdout.trimEnd().split("\n").at(-1)).toBe("2 passed, 1 failed");
  });
});
