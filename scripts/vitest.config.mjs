import { defineConfig } from "vitest/config";
import { SUMMARY_REPORTER } from "../vitest.shared.ts";

// Tests of the CI tooling itself (the summary line, the pack smoke test's checks).
export default defineConfig({
  test: {
    name: "scripts",
    root: import.meta.dirname,
    include: ["**/*.test.mjs"],
    exclude: ["**/node_modules/**", "**/test-results/**"],
    pool: "forks",
    testTimeout: 120_000,
    reporters: ["default", [SUMMARY_REPORTER, { outputFile: "test-results/summary.json" }]],
  },
});
