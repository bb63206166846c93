import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, inject } from "vitest";

/** The test database's URL (see database-setup.ts). */
export function databaseUrl(): string {
  return inject("databaseUrl");
}

/** A schema name no other test uses: every test gets its own tables (`prefix` tells them apart). */
export function uniqueSchema(prefix = "t"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** A pool for the test's own SQL (setup, inspection, terminating connections), ended after the file. */
export function useAdminPool(): () => pg.Pool {
  let pool: pg.Pool | undefined;
  afterAll(async () => {
    await pool?.end();
  });
  return () => {
    if (pool === undefined) {
      pool = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
      pool.on("error", () => undefined);
    }
    return pool;
  };
}

/** Drops a test's schema and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
