import {
  answerApproval,
  CorruptEntryError,
  type Entry,
  restoreSession,
  SessionLog,
  UnsupportedFormatError,
} from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import {
  EXPECTED_STATES,
  FUTURE_FIXTURES,
  fixtureEntryTexts,
  fixtureNames,
  fixtureRef,
  isFutureFixture,
} from "../../session-store/test/helpers/fixture-states.js";
import { migrate, PostgresStore } from "../src/index.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

// The frozen fixture corpus of every released format (packages/session-store/test/fixtures) on
// PostgreSQL: each fixture's entries stored as rows, exactly as FsStore has them in its file minus
// its line frame, restore to the same exact states as through FsStore; a log from a newer podkit
// is the same UnsupportedFormatError.
const admin = useAdminPool();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A fresh schema holding the given fixtures as rows, and a store on it. */
async function storeWith(names: readonly string[]): Promise<PostgresStore> {
  const schema = uniqueSchema("fx");
  await migrate(admin(), { schema });
  const store = new PostgresStore({ url: databaseUrl(), schema, maxConnections: 2 });
  cleanup.push(() => dropSchema(admin(), schema));
  cleanup.push(() => store.close());
  for (const name of names) {
    const ref = fixtureRef(name);
    await admin().query(`INSERT INTO "${schema}".podkit_segments (segment_id, session_id) VALUES ($1, $2)`, [
      ref.segmentId,
      ref.sessionId,
    ]);
    for (const [seq, body] of fixtureEntryTexts(name).entries()) {
      await admin().query(
        `INSERT INTO "${schema}".podkit_entries (segment_id, seq, body) VALUES ($1, $2, $3)`,
        [ref.segmentId, seq, body],
      );
    }
  }
  return store;
}

/** The fixtures of one format folder (the v1 logs and their v2 re-framing share ids). */
const inFolder = (version: string) => fixtureNames().filter((name) => name.startsWith(`${version}/`));

describe("the fixture corpus on PostgreSQL", () => {
  for (const version of ["v1", "v2", "v3"]) {
    it(`every ${version} fixture restores to its exact expected state`, async () => {
      const names = inFolder(version).filter((name) => !isFutureFixture(name));
      expect(names.length).toBeGreaterThanOrEqual(5);
      const store = await storeWith(names);
      for (const name of names) {
        const expected = EXPECTED_STATES[name];
        expect(expected, `${name} has no expected state`).toBeDefined();
        expect((await SessionLog.openSegment(store, fixtureRef(name))).state, name).toEqual(expected);
      }
    });
  }

  it("a log from a newer podkit is the same UnsupportedFormatError as on FsStore, never corruption", async () => {
    const names = Object.keys(FUTURE_FIXTURES);
    expect(names.length).toBeGreaterThanOrEqual(2);
    const store = await storeWith(names);
    for (const name of names) {
      const future = FUTURE_FIXTURES[name] as NonNullable<(typeof FUTURE_FIXTURES)[string]>;
      const ref = fixtureRef(name);
      const read: Entry<unknown>[] = [];
      const error = await (async () => {
        for await (const entry of store.readAll(ref)) read.push(entry);
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(UnsupportedFormatError.isInstance(error), name).toBe(true);
      expect(CorruptEntryError.isInstance(error), name).toBe(false);
      expect(error, name).toMatchObject({ line: future.line, kind: future.kind, version: future.version });
      expect((error as Error).message, name).toMatch(/^postgres:.*written by a newer podkit/);
      expect(read, name).toHaveLength(future.line - 1);
      const restoring = await restoreSession(store, ref.sessionId).catch((e: unknown) => e);
      expect(UnsupportedFormatError.isInstance(restoring), name).toBe(true);
    }
  });

  it("main's v2 approvals keep landing in their v2 segment; a v2 segment without approvals forks into v3 first", async () => {
    const store = await storeWith(["v2/approvals.jsonl", "v2/plain.jsonl"]);
    const approvals = fixtureRef("v2/approvals.jsonl");
    await answerApproval(store, approvals.sessionId, "toolu_04rm", { decision: "allow", by: "pg" });
    expect(await store.listSegments(approvals.sessionId)).toEqual([approvals.segmentId]);
    expect(await store.entryCount(approvals)).toBe(fixtureEntryTexts("v2/approvals.jsonl").length + 1);

    const plain = fixtureRef("v2/plain.jsonl");
    const log = await SessionLog.openSegment(store, plain);
    await log.append({
      kind: "approval_requested",
      call_id: "c1",
      tool: "bash",
      arguments: "{}",
      pod_path: ["root"],
      asked_by: "bash",
    });
    expect(await store.entryCount(plain)).toBe(fixtureEntryTexts("v2/plain.jsonl").length);
    expect(log.segmentId).not.toBe(plain.segmentId);
    expect(log.state).toMatchObject({
      formatVersion: 3,
      lineage: { forkedFrom: { segmentId: plain.segmentId } },
      approvals: [{ callId: "c1" }],
    });
    expect((await restoreSession(store, plain.sessionId)).segmentId).toBe(log.segmentId);
  });
});
