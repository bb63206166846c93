import { defineConfig } from "vitest/config";
import { SUMMARY_REPORTER } from "./vitest.shared.ts";

// `npx vitest run [filter]` from the repository root runs every package's own config as a project
// (packages/*/vitest.config.ts) plus the CI tooling's tests (scripts/). CI runs each package
// separately through `turbo run test` (see scripts/run-tests.mjs).
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "scripts/vitest.config.mjs"],
    reporters: ["default", [SUMMARY_REPORTER, { outputFile: "test-results/summary.json" }]],
  },
});
