import { createHash } from "node:crypto";
import { SessionLog } from "@podkit/session-store";
import { describeBlobStoreConformance } from "@podkit/session-store/conformance";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, PostgresStore } from "../src/index.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../src/migrations.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();

describeBlobStoreConformance(
  "PostgresStore",
  async () => {
    const schema = uniqueSchema();
    const open = () => new PostgresStore({ url: databaseUrl(), schema, maxConnections: 4 });
    const stores = [open()];
    const table = `"${schema}".podkit_blobs`;
    return {
      store: stores[0] as PostgresStore,
      openSecond() {
        const second = open();
        stores.push(second);
        return second;
      },
      async readRaw(digest) {
        const result = await admin().query(`SELECT bytes FROM ${table} WHERE digest = $1`, [digest]);
        return result.rows[0]?.bytes as Buffer | undefined;
      },
      async tamper(digest, bytes) {
        await admin().query(`UPDATE ${table} SET bytes = $2 WHERE digest = $1`, [digest, Buffer.from(bytes)]);
      },
      async age(digest, ageMs) {
        await admin().query(
          `UPDATE ${table} SET last_put_at = now() - make_interval(secs => $2::float8 / 1000) WHERE digest = $1`,
          [digest, ageMs],
        );
      },
      async writeRaw(ref, texts) {
        await migrate(admin(), { schema });
        await admin().query(
          `INSERT INTO "${schema}".podkit_segments (segment_id, session_id) VALUES ($1, $2)`,
          [ref.segmentId, ref.sessionId],
        );
        for (const [seq, body] of texts.entries()) {
          await admin().query(
            `INSERT INTO "${schema}".podkit_entries (segment_id, seq, body) VALUES ($1, $2, $3)`,
            [ref.segmentId, seq, body],
          );
        }
      },
      async dispose() {
        await Promise.all(stores.map((store) => store.close()));
        await dropSchema(admin(), schema);
      },
    };
  },
  { describe, it },
);

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("PostgreSQL blobs", () => {
  it("a put is one statement: the row holds the bytes, first and last stored; a put again renews only last_put_at", async () => {
    const schema = uniqueSchema();
    cleanup.push(() => dropSchema(admin(), schema));
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => store.close());
    const bytes = Buffer.from("hello blobs\n");
    const digest = await store.blobs.put(bytes);
    expect(digest).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
    await admin().query(
      `UPDATE "${schema}".podkit_blobs SET created_at = now() - interval '2 hours', last_put_at = now() - interval '2 hours'`,
    );
    await store.blobs.put(new Uint8Array(bytes));
    const row = (
      await admin().query(
        `SELECT bytes, now() - created_at > interval '1 hour' AS created_old, now() - last_put_at < interval '1 minute' AS renewed
         FROM "${schema}".podkit_blobs`,
      )
    ).rows;
    expect(row).toEqual([{ bytes, created_old: true, renewed: true }]);
  });

  it("the table refuses a row whose key is not a digest, whoever writes it", async () => {
    const schema = uniqueSchema();
    cleanup.push(() => dropSchema(admin(), schema));
    await migrate(databaseUrl(), { schema });
    await expect(
      admin().query(`INSERT INTO "${schema}".podkit_blobs (digest, bytes) VALUES ('../etc/passwd', '\\x00')`),
    ).rejects.toThrow(/check constraint/);
  });
});

describe("upgrading a version-4 schema to blobs (version 5)", () => {
  it("adds the blobs table and leaves every session as it was", async () => {
    const schema = uniqueSchema();
    cleanup.push(() => dropSchema(admin(), schema));
    const s = `"${schema}"`;
    await admin().query(`CREATE SCHEMA ${s}`);
    await admin().query(
      `CREATE TABLE ${s}.podkit_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const migration of MIGRATIONS.filter((m) => m.version <= 4)) {
      await admin().query(migration.up(s));
      await admin().query(`INSERT INTO ${s}.podkit_schema_version (version) VALUES ($1)`, [
        migration.version,
      ]);
    }
    // A session written by version 4's statements: its segment row and entries.
    const start = JSON.stringify({
      kind: "segment_start",
      ts: 1,
      v: 3,
      session_id: "s4",
      segment_id: "g4",
      system_prompt: "before blobs",
      config: {},
      history: [],
    });
    await admin().query(`INSERT INTO ${s}.podkit_segments (segment_id, session_id) VALUES ('g4', 's4')`);
    await admin().query(`INSERT INTO ${s}.podkit_entries (segment_id, seq, body) VALUES ('g4', 0, $1)`, [
      start,
    ]);

    expect(await migrate(databaseUrl(), { schema })).toEqual({ schema, from: 4, to: SCHEMA_VERSION });
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => store.close());
    const log = await SessionLog.open(store, "s4");
    expect(log.state.systemPrompt).toBe("before blobs");
    await log.append({ kind: "user_input", text: "after the upgrade" });
    const digest = await store.blobs.put(Buffer.from("first blob"));
    expect(await store.blobs.get(digest)).toEqual(Buffer.from("first blob"));
  });
});
