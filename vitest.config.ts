import { defineConfig } from "vitest/config";

// One suite for the whole monorepo. Tests import sibling packages through their built
// `dist/` (the root `test` script builds first), exactly as a user of the packages would.
export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
