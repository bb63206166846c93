import { availableParallelism } from "node:os";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type ViteUserConfig } from "vitest/config";

/** The reporter whose output scripts/ci-summary.mjs counts (see that file for why not vitest's JSON). */
export const SUMMARY_REPORTER = fileURLToPath(
  new URL("./scripts/vitest-summary-reporter.mjs", import.meta.url),
);

/**
 * The vitest config of one package (`packages/<name>/vitest.config.ts`). `pnpm test` in the package
 * and turbo run it with the package as root; the root vitest.config.ts lists the same files as projects.
 * Tests import sibling packages through their built `dist/`, exactly as a user of the packages would,
 * so the package's `test` task depends on the builds (turbo.json).
 */
export function packageTestConfig(
  packageDir: string,
  test: { passWithNoTests?: boolean; testTimeout?: number } = {},
): ViteUserConfig {
  return defineConfig({
    test: {
      name: basename(packageDir),
      root: packageDir,
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      pool: "forks",
      // Vitest's default on a two-core machine is one fork, which leaves a core idle while a test
      // waits on a child process, PostgreSQL or a browser; two forks took the pod package from
      // 208 s to 140 s there with every test green. Larger machines keep the default (cores - 1).
      maxWorkers: Math.max(2, availableParallelism() - 1),
      testTimeout: 30_000,
      hookTimeout: 30_000,
      reporters: ["default", [SUMMARY_REPORTER, { outputFile: "test-results/summary.json" }]],
      ...test,
    },
  });
}
