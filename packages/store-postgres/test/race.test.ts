import { SessionLog } from "@podkit/session-store";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/index.js";
import { storeQueries } from "../src/queries.js";
import { spawnChild } from "./helpers/children.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function fixture() {
  const schema = uniqueSchema();
  const store = new PostgresStore({ url: databaseUrl(), schema });
  cleanup.push(() => dropSchema(admin(), schema));
  cleanup.push(() => store.close());
  const log = await SessionLog.create(store, { systemPrompt: "race", config: {} });
  const holder = new pg.Client({ connectionString: databaseUrl() });
  await holder.connect();
  cleanup.push(() => holder.end());
  return { schema, store, log, holder, sql: storeQueries(`"${schema}"`) };
}

/**
 * Waits until some backend other than ours is blocked on a lock while running an append (for
 * 30 s and more: the machine may be busy).
 */
async function someAppendWaitsForALock(): Promise<void> {
  for (let tries = 0; tries < 3000; tries++) {
    const waiting = await admin().query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND query LIKE '%podkit_entries%' AND pid <> pg_backend_pid()`,
    );
    if (waiting.rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no append ever waited for the segment's lock");
}

const entry = (text: string) => JSON.stringify({ kind: "user_input", ts: 1, text });
const input = (text: string) => ({ kind: "user_input" as const, ts: 2, text });

async function userTexts(store: PostgresStore, ref: { sessionId: string; segmentId: string }) {
  const texts: string[] = [];
  for await (const e of store.readAll(ref)) if (e.kind === "user_input") texts.push(e.text);
  return texts;
}

/** The seqs stored for a segment, straight from the table (a gap is corruption). */
async function seqsOf(schema: string, segmentId: string): Promise<number[]> {
  const result = await admin().query(
    `SELECT seq FROM "${schema}".podkit_entries WHERE segment_id = $1 ORDER BY seq`,
    [segmentId],
  );
  return result.rows.map((row) => row.seq as number);
}

describe("the database decides races (exact interleavings, forced with a held transaction)", () => {
  it("an append waiting for another writer's uncommitted append re-checks the committed count and writes nothing", async () => {
    const { store, log, holder, sql } = await fixture();
    await holder.query("BEGIN");
    const held = await holder.query(sql.appendOne, [log.segmentId, log.sessionId, 1, entry("first")]);
    expect(held.rowCount).toBe(1);
    // The loser starts while the winner's transaction is open: same expected count (1).
    const loser = store.append(log.ref, [input("second")], { expectedCount: 1 });
    await someAppendWaitsForALock();
    await holder.query("COMMIT");
    expect(await loser).toEqual({ status: "drift", count: 2 });
    expect(await userTexts(store, log.ref)).toEqual(["first"]);
  });

  it("positive control: without the expected count the waiting append lands after the other, at the next seq", async () => {
    const { store, log, holder, sql } = await fixture();
    await holder.query("BEGIN");
    await holder.query(sql.appendAtEnd, [log.segmentId, log.sessionId, JSON.stringify([entry("first")])]);
    const second = store.append(log.ref, [input("second")]);
    await someAppendWaitsForALock();
    await holder.query("COMMIT");
    expect(await second).toEqual({ status: "appended", count: 3 });
    expect(await store.entryCount(log.ref)).toBe(3);
    expect(await userTexts(store, log.ref)).toEqual(["first", "second"]);
  });

  it("a truncation waits for an append in flight, then cuts it too: no entry is left beyond a gap", async () => {
    const { schema, store, log, holder, sql } = await fixture();
    await log.appendMany([input("a"), input("b")]);
    await holder.query("BEGIN");
    await holder.query(sql.appendOne, [log.segmentId, log.sessionId, 3, entry("c")]);
    const truncated = store.truncate(log.ref, 2, { expectedCount: 4 });
    await someAppendWaitsForALock();
    await holder.query("COMMIT");
    expect(await truncated).toEqual({ status: "truncated", count: 2 });
    expect(await seqsOf(schema, log.segmentId)).toEqual([0, 1]);
    expect(await userTexts(store, log.ref)).toEqual(["a"]);
  });

  /**
   * A truncation to 2 entries is held open; an append at the old count (4) starts meanwhile with
   * `statement`, then the truncation commits. Returns the append's outcome and the seqs left.
   */
  async function appendDuringTruncation(
    statementOf: (sql: ReturnType<typeof storeQueries>) => string,
    { waits }: { waits: boolean },
  ) {
    const { schema, store, log, holder, sql } = await fixture();
    const statement = statementOf(sql);
    await log.appendMany([input("a"), input("b"), input("c")]);
    await holder.query("BEGIN");
    await holder.query(sql.lockSegment, [log.segmentId, log.sessionId]);
    await holder.query(sql.lockLast, [log.segmentId]);
    await holder.query(sql.truncate, [log.segmentId, log.sessionId, 2]);
    const late = admin().query(statement, [log.segmentId, log.sessionId, 4, entry("late")]);
    if (waits) await someAppendWaitsForALock();
    else await late;
    await holder.query("COMMIT");
    return { inserted: (await late).rowCount, seqs: await seqsOf(schema, log.segmentId), store, log };
  }

  it("an append at a count a truncation is cutting waits for it, then finds its entry gone and writes nothing", async () => {
    const { inserted, seqs, store, log } = await appendDuringTruncation((sql) => sql.appendOne, {
      waits: true,
    });
    expect(inserted).toBe(0);
    expect(seqs).toEqual([0, 1]);
    expect(await store.append(log.ref, [input("next")], { expectedCount: 4 })).toEqual({
      status: "drift",
      count: 2,
    });
  });

  it("positive control: the same append checking the entry before it without locking it leaves a gap", async () => {
    const unlocked = (sql: ReturnType<typeof storeQueries>) => {
      const statement = sql.appendOne.replace("FOR KEY SHARE", "");
      expect(statement).not.toBe(sql.appendOne);
      return statement;
    };
    // Without the lock the append does not wait for the truncation: the entry before it is still
    // there in its snapshot (deleted, uncommitted), so it inserts past the cut.
    const { inserted, seqs } = await appendDuringTruncation(unlocked, { waits: false });
    expect(inserted).toBe(1);
    expect(seqs).toEqual([0, 1, 4]);
  });

  it("an append of no entries writes nothing and still says whether the count matched", async () => {
    const { schema, store, log } = await fixture();
    expect(await store.append(log.ref, [], { expectedCount: 1 })).toEqual({ status: "appended", count: 1 });
    expect(await store.append(log.ref, [], { expectedCount: 3 })).toEqual({ status: "drift", count: 1 });
    expect(await store.append(log.ref, [])).toEqual({ status: "appended", count: 1 });
    expect(await seqsOf(schema, log.segmentId)).toEqual([0]);
  });

  it("a client SIGKILLed while its append is inside the database leaves nothing partial, and the next append works", {
    timeout: 60_000,
  }, async () => {
    const { schema, store, log, holder, sql } = await fixture();
    const child = spawnChild("writer-child.mjs", [
      databaseUrl(),
      schema,
      log.sessionId,
      log.segmentId,
      "w",
      "1",
      "3",
    ]);
    cleanup.push(async () => {
      child.child.kill("SIGKILL");
    });
    expect(await child.next()).toBe("ready");
    // Hold the lock on the segment's last entry so the child's append is sent and stays in flight.
    await holder.query("BEGIN");
    await holder.query(sql.lockLast, [log.segmentId]);
    child.send("go");
    await someAppendWaitsForALock();
    child.child.kill("SIGKILL");
    await child.exited;
    await holder.query("COMMIT");
    // The server drops the dead client's backend; its statement never commits.
    for (let tries = 0; tries < 500; tries++) {
      const left = await admin().query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%podkit_entries%' AND pid <> pg_backend_pid() AND state <> 'idle'",
      );
      if (left.rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // A statement the server already holds runs to its end even though its client is gone (the
    // server notices only when it answers): the batch is there whole, unacknowledged, or not at all.
    const texts: string[] = [];
    for await (const e of store.readAll(log.ref)) if (e.kind === "user_input") texts.push(e.text);
    expect([[], ["w-0-0", "w-0-1", "w-0-2"]]).toContainEqual(texts);
    const reopened = await SessionLog.open(store, log.sessionId);
    expect(await reopened.append({ kind: "user_input", text: "after" })).toMatchObject({
      segmentId: log.segmentId,
      driftFork: null,
    });
    expect(await store.entryCount(log.ref)).toBe(1 + texts.length + 1);
  });
});
