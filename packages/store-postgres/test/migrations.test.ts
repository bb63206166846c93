import { createServer } from "node:net";
import { SessionStoreError } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import {
  migrate,
  PostgresQueryError,
  PostgresStore,
  PostgresStoreUsageError,
  SCHEMA_VERSION,
  SchemaTooNewError,
} from "../src/index.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const schemas: string[] = [];
afterEach(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(admin(), schema);
});

function freshSchema(): string {
  const schema = uniqueSchema();
  schemas.push(schema);
  return schema;
}

async function versions(schema: string): Promise<number[]> {
  const result = await admin().query(
    `SELECT version FROM "${schema}".podkit_schema_version ORDER BY version`,
  );
  return result.rows.map((row) => row.version as number);
}

describe("schema migrations", () => {
  it("are applied on first use of a store", async () => {
    const schema = freshSchema();
    const store = new PostgresStore({ url: databaseUrl(), schema });
    try {
      expect(await store.listSessions()).toEqual([]);
    } finally {
      await store.close();
    }
    expect(await versions(schema)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it("are applied by migrate(url), once, even when many machines start together", async () => {
    const schema = freshSchema();
    const results = await Promise.all(Array.from({ length: 4 }, () => migrate(databaseUrl(), { schema })));
    expect(results.filter((result) => result.from === 0)).toHaveLength(1);
    expect(results.every((result) => result.to === SCHEMA_VERSION)).toBe(true);
    expect(await migrate(databaseUrl(), { schema })).toEqual({
      schema,
      from: SCHEMA_VERSION,
      to: SCHEMA_VERSION,
    });
    expect(await versions(schema)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it("refuse a schema migrated by a newer podkit with SchemaTooNewError, writing nothing", async () => {
    const schema = freshSchema();
    await migrate(databaseUrl(), { schema });
    await admin().query(`INSERT INTO "${schema}".podkit_schema_version (version) VALUES ($1)`, [
      SCHEMA_VERSION + 1,
    ]);
    const tooNew = (error: unknown) =>
      SchemaTooNewError.isInstance(error) &&
      SessionStoreError.isInstance(error) &&
      error.databaseVersion === SCHEMA_VERSION + 1 &&
      /upgrade podkit/.test(error.message);
    await expect(migrate(databaseUrl(), { schema })).rejects.toSatisfy(tooNew);
    const store = new PostgresStore({ url: databaseUrl(), schema });
    try {
      await expect(store.listSessions()).rejects.toSatisfy(tooNew);
      await expect(store.createSegment({ sessionId: "s", segmentId: "g" }, [])).rejects.toThrow(
        /segment_start/,
      );
    } finally {
      await store.close();
    }
  });

  it("reject a schema name that is not a plain identifier", () => {
    expect(() => new PostgresStore({ url: databaseUrl(), schema: 'x"; DROP TABLE y; --' })).toThrow(
      expect.toSatisfy((error: unknown) => PostgresStoreUsageError.isInstance(error)),
    );
  });
});

describe("an unreachable database", () => {
  it("is a PostgresQueryError naming the operation and the cause", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as { port: number };
        server.close(() => resolve(address.port));
      });
    });
    const store = new PostgresStore({ url: `postgres://nobody@127.0.0.1:${port}/none` });
    try {
      await expect(store.listSessions()).rejects.toSatisfy(
        (error: unknown) =>
          PostgresQueryError.isInstance(error) &&
          /listing sessions .*ECONNREFUSED/.test((error as Error).message),
      );
    } finally {
      await store.close();
    }
  });
});
