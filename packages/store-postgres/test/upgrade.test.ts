import { type Entry, restoreSession, SessionLog } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, PostgresQueryError, PostgresStore, SchemaUpgradeBlockedError } from "../src/index.js";
import { MIGRATIONS, SCHEMA_VERSION } from "../src/migrations.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

// The statements a version-2 writer (podkit before insert-only appends) ran, as released.
const v2 = (s: string) => ({
  create: `
    WITH segment AS (
      INSERT INTO ${s}.podkit_segments (segment_id, session_id, entry_count) VALUES ($1, $2, $3)
      RETURNING segment_id
    )
    INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
    SELECT segment.segment_id, 0, $4::text FROM segment
    UNION ALL
    SELECT segment.segment_id, entry.ord::integer, entry.body
    FROM segment, json_array_elements_text($5::json) WITH ORDINALITY AS entry(body, ord)`,
  appendOne: `
    WITH segment AS (
      UPDATE ${s}.podkit_segments SET entry_count = entry_count + 1
      WHERE segment_id = $1 AND session_id = $2 AND ($3::integer IS NULL OR entry_count = $3::integer)
      RETURNING entry_count
    )
    INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
    SELECT $1, segment.entry_count - 1, $4::text FROM segment
    RETURNING seq + 1 AS entry_count`,
});

const start = (sessionId: string, segmentId: string) =>
  JSON.stringify({
    kind: "segment_start",
    ts: 1,
    v: 2,
    session_id: sessionId,
    segment_id: segmentId,
    system_prompt: "written by version 2",
    config: {},
    history: [],
  });
const input = (text: string) => JSON.stringify({ kind: "user_input", ts: 2, text });

/** A schema at version 2 holding one session written by a version-2 writer: a segment of 1 + `inputs` entries. */
async function versionTwoSession(inputs: number) {
  const schema = uniqueSchema();
  cleanup.push(() => dropSchema(admin(), schema));
  const s = `"${schema}"`;
  await admin().query(`CREATE SCHEMA ${s}`);
  await admin().query(
    `CREATE TABLE ${s}.podkit_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  for (const migration of MIGRATIONS.filter((m) => m.version <= 2)) {
    await admin().query(migration.up(s));
    await admin().query(`INSERT INTO ${s}.podkit_schema_version (version) VALUES ($1)`, [migration.version]);
  }
  const ref = {
    sessionId: "0193a000-0000-7000-8000-000000000001",
    segmentId: "0193a000-0000-7000-8000-000000000002",
  };
  await admin().query(v2(s).create, [
    ref.segmentId,
    ref.sessionId,
    2,
    start(ref.sessionId, ref.segmentId),
    JSON.stringify([input("m0")]),
  ]);
  for (let n = 1; n < inputs; n++) {
    const appended = await admin().query(v2(s).appendOne, [
      ref.segmentId,
      ref.sessionId,
      n + 1,
      input(`m${n}`),
    ]);
    expect(appended.rows).toEqual([{ entry_count: n + 2 }]);
  }
  return { schema, s, ref };
}

async function texts(store: PostgresStore, ref: { sessionId: string; segmentId: string }) {
  const found: string[] = [];
  for await (const entry of store.readAll(ref) as AsyncIterable<Entry>) {
    if (entry.kind === "user_input") found.push(entry.text);
  }
  return found;
}

describe("upgrading a version-2 schema to insert-only appends (version 3)", () => {
  it("keeps every entry, counts them from the rows and appends after them", async () => {
    const { schema, ref } = await versionTwoSession(5);
    expect(await migrate(databaseUrl(), { schema })).toEqual({ schema, from: 2, to: SCHEMA_VERSION });
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => store.close());
    expect(await store.entryCount(ref)).toBe(6);
    expect(await texts(store, ref)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
    expect((await store.describeSegment(ref)).entryCount).toBe(6);
    const log = await SessionLog.open(store, ref.sessionId);
    expect(await log.append({ kind: "user_input", text: "m5" })).toMatchObject({
      segmentId: ref.segmentId,
      index: 6,
      driftFork: null,
    });
    expect((await restoreSession(store, ref.sessionId)).entryCount).toBe(7);
    // A stale expected count (what a version-2 writer that missed the upgrade would hold) drifts.
    expect(
      await store.append(ref, [{ kind: "user_input", ts: 3, text: "stale" }], { expectedCount: 6 }),
    ).toEqual({
      status: "drift",
      count: 7,
    });
  });

  it("refuses a version-2 writer afterwards: its append and its create fail and write nothing", async () => {
    const { schema, s, ref } = await versionTwoSession(2);
    // Positive control: before the upgrade the same statement appends.
    expect(
      (await admin().query(v2(s).appendOne, [ref.segmentId, ref.sessionId, 3, input("before")])).rowCount,
    ).toBe(1);
    await migrate(databaseUrl(), { schema });
    await expect(
      admin().query(v2(s).appendOne, [ref.segmentId, ref.sessionId, 4, input("after")]),
    ).rejects.toThrow(/entry_count/);
    await expect(
      admin().query(v2(s).create, [
        "0193a000-0000-7000-8000-000000000009",
        ref.sessionId,
        1,
        start(ref.sessionId, "x"),
        "[]",
      ]),
    ).rejects.toThrow(/entry_count/);
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => store.close());
    expect(await texts(store, ref)).toEqual(["m0", "m1", "before"]);
    expect(await store.listSegments(ref.sessionId)).toEqual([ref.segmentId]);
  });

  it("stops on a segment whose count disagrees with its entries, naming it, and changes nothing", async () => {
    const { schema, s, ref } = await versionTwoSession(3);
    // The last entry deleted by hand: only the stored count still knows it is missing.
    await admin().query(`DELETE FROM ${s}.podkit_entries WHERE segment_id = $1 AND seq = 3`, [ref.segmentId]);
    const error = await migrate(databaseUrl(), { schema }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(SchemaUpgradeBlockedError.isInstance(error)).toBe(true);
    expect(PostgresQueryError.isInstance(error)).toBe(false);
    expect(error).toMatchObject({
      version: 3,
      segments: [{ segmentId: ref.segmentId, counted: 4, held: 3 }],
    });
    expect((error as Error).message).toMatch(
      new RegExp(`${ref.segmentId} \\(counts 4, holds 3\\).*Nothing was changed`),
    );
    const versions = await admin().query(`SELECT version FROM ${s}.podkit_schema_version ORDER BY version`);
    expect(versions.rows.map((row) => row.version)).toEqual([1, 2]);
    const counted = await admin().query(`SELECT entry_count FROM ${s}.podkit_segments`);
    expect(counted.rows).toEqual([{ entry_count: 4 }]);
  });
});

describe("upgrading a version-3 schema to the sub-pod index (version 4)", () => {
  it("fills in the parent of every child segment written before, so listChildSessions finds them; new children are indexed as they are created", async () => {
    const schema = uniqueSchema();
    cleanup.push(() => dropSchema(admin(), schema));
    const s = `"${schema}"`;
    await admin().query(`CREATE SCHEMA ${s}`);
    await admin().query(
      `CREATE TABLE ${s}.podkit_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const migration of MIGRATIONS.filter((m) => m.version <= 3)) {
      await admin().query(migration.up(s));
      await admin().query(`INSERT INTO ${s}.podkit_schema_version (version) VALUES ($1)`, [
        migration.version,
      ]);
    }
    // What a version-3 writer created: segment rows without a parent column, the link in the body.
    const segment = (sessionId: string, segmentId: string, parent?: string) =>
      JSON.stringify({
        kind: "segment_start",
        ts: 1,
        v: 2,
        session_id: sessionId,
        segment_id: segmentId,
        system_prompt: "s",
        config: {},
        history: [],
        ...(parent === undefined
          ? {}
          : { parent: { session_id: parent, call_id: "c", role: "r", depth: 1 } }),
      });
    const create = `
      WITH segment AS (INSERT INTO ${s}.podkit_segments (segment_id, session_id) VALUES ($1, $2) RETURNING segment_id)
      INSERT INTO ${s}.podkit_entries (segment_id, seq, body) SELECT segment.segment_id, 0, $3::text FROM segment`;
    const root = "0193b000-0000-7000-8000-000000000001";
    const child = "0193b000-0000-7000-8000-000000000003";
    await admin().query(create, [`${root}-s`, root, segment(root, `${root}-s`)]);
    await admin().query(create, [`${child}-s`, child, segment(child, `${child}-s`, root)]);
    // A damaged body does not stop the upgrade.
    await admin().query(create, [
      "0193b000-0000-7000-8000-00000000000f-s",
      "0193b000-0000-7000-8000-00000000000f",
      '{"kind":"segme',
    ]);

    expect(await migrate(databaseUrl(), { schema })).toEqual({ schema, from: 3, to: SCHEMA_VERSION });
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => store.close());
    expect(await store.listChildSessions(root)).toEqual([child]);
    expect(await store.listChildSessions(child)).toEqual([]);
    const later = await SessionLog.create(store, {
      systemPrompt: "later",
      config: {},
      parent: { session_id: root, call_id: "c2", role: "r", depth: 1 },
    });
    expect(await store.listChildSessions(root)).toEqual([later.sessionId, child]);
  });
});
