import { CorruptEntryError, type Entry, restoreSession, SessionLog } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/index.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A session of `count` user inputs whose entry rows are then stored again in reverse order. */
async function reversedSession(count: number) {
  const schema = uniqueSchema();
  const store = new PostgresStore({ url: databaseUrl(), schema, maxConnections: 2 });
  cleanups.push(async () => {
    await store.close();
    await dropSchema(admin(), schema);
  });
  const log = await SessionLog.create(store, { systemPrompt: "order", config: {} });
  await log.appendMany(Array.from({ length: count }, (_, i) => ({ kind: "user_input", text: `m${i}` })));
  const table = `"${schema}".podkit_entries`;
  // Rewrite the rows newest first, so the heap (and an unordered scan) returns them reversed.
  await admin().query(`
    WITH taken AS (DELETE FROM ${table} WHERE segment_id = '${log.segmentId}' RETURNING segment_id, seq, body)
    INSERT INTO ${table} (segment_id, seq, body) SELECT segment_id, seq, body FROM taken ORDER BY seq DESC`);
  const physical = await admin().query(`SELECT seq FROM ${table} WHERE segment_id = $1`, [log.segmentId]);
  return { store, log, table, physical: physical.rows.map((row) => row.seq as number) };
}

async function read(store: PostgresStore, ref: { sessionId: string; segmentId: string }) {
  const entries: Entry[] = [];
  for await (const entry of store.readAll(ref)) entries.push(entry);
  return entries;
}

describe("reading a segment from PostgreSQL", () => {
  it("returns entries in sequence order whatever order the rows are stored in", async () => {
    const { store, log, physical } = await reversedSession(50);
    // The rows really are stored out of order (an unordered read would return them so).
    expect(physical.slice(0, 3)).toEqual([50, 49, 48]);
    const ref = { sessionId: log.sessionId, segmentId: log.segmentId };
    const texts = (await read(store, ref)).flatMap((entry) =>
      entry.kind === "user_input" ? [entry.text] : [],
    );
    expect(texts).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
    expect((await restoreSession(store, log.sessionId)).entryCount).toBe(51);
  });

  it("reports a row missing from the middle as CorruptEntryError naming the entry", async () => {
    const { store, log, table } = await reversedSession(10);
    await admin().query(`DELETE FROM ${table} WHERE segment_id = $1 AND seq = 4`, [log.segmentId]);
    const ref = { sessionId: log.sessionId, segmentId: log.segmentId };
    const error = await read(store, ref).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(CorruptEntryError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ line: 5 });
    expect((error as CorruptEntryError).reason).toBe(
      "entry seq 4 is missing (the segment counts 11 entries)",
    );
  });

  it("does not read a segment under another session's id", async () => {
    const { store, log } = await reversedSession(3);
    const other = await SessionLog.create(store, { systemPrompt: "other", config: {} });
    const error = await read(store, { sessionId: other.sessionId, segmentId: log.segmentId }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toMatch(/not found|no segment/i);
  });
});
