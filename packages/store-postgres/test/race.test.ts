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

/** Waits until some backend other than ours is blocked on a lock while running an append. */
async function someAppendWaitsForALock(): Promise<void> {
  for (let tries = 0; tries < 1000; tries++) {
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

describe("the database decides races (exact interleavings, forced with a held transaction)", () => {
  it("an append waiting for another writer's uncommitted append re-checks the committed count and writes nothing", async () => {
    const { store, log, holder, sql } = await fixture();
    await holder.query("BEGIN");
    const held = await holder.query(sql.append, [
      log.segmentId,
      log.sessionId,
      1,
      1,
      JSON.stringify([entry("first")]),
    ]);
    expect(held.rows).toEqual([{ entry_count: 2 }]);
    // The loser starts while the winner's transaction is open: same expected count (1).
    const loser = store.append(log.ref, [{ kind: "user_input", ts: 2, text: "second" }], {
      expectedCount: 1,
    });
    await someAppendWaitsForALock();
    await holder.query("COMMIT");
    expect(await loser).toEqual({ status: "drift", count: 2 });
    const texts: string[] = [];
    for await (const e of store.readAll(log.ref)) if (e.kind === "user_input") texts.push(e.text);
    expect(texts).toEqual(["first"]);
  });

  it("positive control: without the expected count the waiting append lands after the other, at the next seq", async () => {
    const { store, log, holder, sql } = await fixture();
    await holder.query("BEGIN");
    await holder.query(sql.append, [log.segmentId, log.sessionId, 1, null, JSON.stringify([entry("first")])]);
    const second = store.append(log.ref, [{ kind: "user_input", ts: 2, text: "second" }]);
    await someAppendWaitsForALock();
    await holder.query("COMMIT");
    expect(await second).toEqual({ status: "appended", count: 3 });
    expect(await store.entryCount(log.ref)).toBe(3);
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
    // Hold the segment's row lock so the child's append is sent and stays in flight.
    await holder.query("BEGIN");
    await holder.query(sql.lockSegment, [log.segmentId, log.sessionId]);
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
