// Vitest reporter writing the facts scripts/ci-summary.mjs counts: every test with its state,
// and every error that is not a test's own failure (a throwing beforeAll/afterAll, a file that
// fails to load, an unhandled error or rejection). Vitest's built-in JSON report has no field
// for unhandled errors and folds hook failures into suite counters that also count failing tests,
// so a run could read "3 passed, 0 failed" while vitest exited 1.
//   reporters: ["default", ["<repo>/scripts/vitest-summary-reporter.mjs", { outputFile }]]
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";

export const SUMMARY_FORMAT = "podkit-vitest-summary/1";

function firstLine(error) {
  const text = String(error?.message ?? error?.name ?? error ?? "unknown error");
  return text.split("\n")[0];
}

function testState(testCase) {
  const { state } = testCase.result();
  if (state === "skipped" && testCase.options.mode === "todo") return "todo";
  return state;
}

export default class VitestSummaryReporter {
  constructor(options = {}) {
    this.outputFile = options.outputFile ?? "test-results/summary.json";
  }

  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules, unhandledErrors, reason) {
    const root = this.root ?? process.cwd();
    const file = (module) => relative(root, module.moduleId);
    const tests = [];
    const errors = [];
    for (const module of testModules) {
      for (const error of module.errors()) {
        errors.push({ kind: "module", where: file(module), message: firstLine(error) });
      }
      for (const suite of module.children.allSuites()) {
        for (const error of suite.errors()) {
          errors.push({
            kind: "suite",
            where: `${file(module)} > ${suite.fullName}`,
            message: firstLine(error),
          });
        }
      }
      for (const testCase of module.children.allTests()) {
        tests.push({ file: file(module), name: testCase.fullName, state: testState(testCase) });
      }
    }
    for (const error of unhandledErrors) {
      errors.push({ kind: "unhandled", where: "", message: firstLine(error) });
    }
    const outputFile = isAbsolute(this.outputFile) ? this.outputFile : resolve(root, this.outputFile);
    mkdirSync(dirname(outputFile), { recursive: true });
    writeFileSync(
      outputFile,
      `${JSON.stringify({ format: SUMMARY_FORMAT, reason, tests, errors }, null, 1)}\n`,
    );
  }
}
