import { type SegmentRef, SessionLog } from "@podkit/session-store";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/index.js";
import { storeQueries } from "../src/queries.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Collects notifications until `count` arrived (bounded generously: the server may be busy). */
function collector() {
  const seen: SegmentRef[] = [];
  const waiters: (() => void)[] = [];
  return {
    seen,
    onAppend: (ref: SegmentRef) => {
      seen.push(ref);
      for (const waiter of waiters.splice(0)) waiter();
    },
    until: async (count: number) => {
      const deadline = Date.now() + 20_000;
      while (seen.length < count) {
        if (Date.now() > deadline) throw new Error(`${seen.length} of ${count} notifications arrived`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
  };
}

describe("append notifications (LISTEN/NOTIFY)", () => {
  it("tell a listener on another store of every committed create, append and truncate of its schema only", async () => {
    const schema = uniqueSchema();
    const other = uniqueSchema();
    cleanup.push(() => dropSchema(admin(), schema));
    cleanup.push(() => dropSchema(admin(), other));
    const writer = new PostgresStore({ url: databaseUrl(), schema });
    const elsewhere = new PostgresStore({ url: databaseUrl(), schema: other });
    const reader = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(
      () => writer.close(),
      () => elsewhere.close(),
      () => reader.close(),
    );
    await writer.listSessions(); // migrated before listening
    const heard = collector();
    const listening = await reader.listenForAppends(heard.onAppend);
    cleanup.push(() => listening.close());

    await SessionLog.create(elsewhere, { systemPrompt: "other schema", config: {} });
    const log = await SessionLog.create(writer, { systemPrompt: "p", config: {} });
    await log.append({ kind: "user_input", text: "hello" });
    await writer.truncate(log.ref, 1);
    await heard.until(3);
    const ref = { sessionId: log.sessionId, segmentId: log.segmentId };
    expect(heard.seen).toEqual([ref, ref, ref]);

    // An append rolled back by its transaction is never announced, nor one that drifted and
    // wrote nothing.
    const sql = storeQueries(`"${schema}"`);
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    cleanup.push(() => client.end());
    const body = JSON.stringify({ kind: "user_input", ts: 1, text: "rolled back" });
    await client.query("BEGIN");
    expect((await client.query(sql.appendOne, [log.segmentId, log.sessionId, 1, body])).rowCount).toBe(1);
    await client.query("ROLLBACK");
    const drifted = await writer.append(log.ref, [{ kind: "user_input", ts: 1, text: "late" }], {
      expectedCount: 5,
    });
    expect(drifted).toEqual({ status: "drift", count: 1 });
    await writer.append(log.ref, [{ kind: "user_input", ts: 1, text: "again" }], { expectedCount: 1 });
    await heard.until(4);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a fifth would have arrived by now
    expect(heard.seen).toHaveLength(4);
  });

  it("stops after close and reconnects after its connection is killed", async () => {
    const schema = uniqueSchema();
    cleanup.push(() => dropSchema(admin(), schema));
    const store = new PostgresStore({ url: databaseUrl(), schema });
    cleanup.push(() => store.close());
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    const heard = collector();
    const listening = await store.listenForAppends(heard.onAppend);
    await admin().query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN podkit_append%' AND pid <> pg_backend_pid()",
    );
    // The listener comes back after its reconnect delay; appends after that are heard (bounded
    // generously: a busy machine stretches the delay and the reconnect).
    const deadline = Date.now() + 20_000;
    while (heard.seen.length === 0 && Date.now() < deadline) {
      await log.append({ kind: "user_input", text: "ping" });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(heard.seen.length).toBeGreaterThan(0);
    await listening.close();
    const before = heard.seen.length;
    await log.append({ kind: "user_input", text: "after close" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard.seen).toHaveLength(before);
  });
});
