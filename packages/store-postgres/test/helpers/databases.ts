import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { type Cluster, startCluster } from "../../../../scripts/pg-cluster.mjs";

/**
 * Real PostgreSQL databases for tests of other packages (the pod, the CLI) that reach the store
 * the way a user does, through a manifest and a URL: on PODKIT_TEST_DATABASE_URL when set (CI), otherwise on
 * a throwaway cluster this file starts and stops (scripts/pg-cluster.mjs). Each call gives the URL
 * of a fresh database of its own, dropped after the file; when no server can be had the tests fail
 * with the reason, they are never skipped.
 */
export function usePostgresDatabases(): () => Promise<string> {
  let cluster: Cluster | undefined;
  let admin: pg.Pool | undefined;
  let serverUrl = "";
  const created: string[] = [];
  beforeAll(async () => {
    const fromEnv = process.env.PODKIT_TEST_DATABASE_URL;
    if (fromEnv === undefined || fromEnv === "") cluster = await startCluster();
    serverUrl = fromEnv || (cluster as Cluster).url;
    admin = new pg.Pool({ connectionString: serverUrl, max: 1 });
    admin.on("error", () => undefined);
  }, 120_000);
  afterAll(async () => {
    for (const name of created.splice(0))
      await admin?.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin?.end();
    cluster?.stop();
  });
  return async () => {
    const name = `podkit_test_${randomBytes(6).toString("hex")}`;
    await (admin as pg.Pool).query(`CREATE DATABASE "${name}"`);
    created.push(name);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
}
