import type { TestProject } from "vitest/node";
import { startCluster } from "../../../../scripts/pg-cluster.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

/**
 * Gives the tests a PostgreSQL URL: PODKIT_TEST_DATABASE_URL when set (CI), otherwise a
 * throwaway cluster started here and stopped after the run. When neither works the run fails
 * with the reason and what to do — these tests are never skipped.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const fromEnv = process.env.PODKIT_TEST_DATABASE_URL;
  if (fromEnv) {
    project.provide("databaseUrl", fromEnv);
    return () => undefined;
  }
  const cluster = await startCluster();
  project.provide("databaseUrl", cluster.url);
  return () => cluster.stop();
}
