import { type Entry, SessionLog } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresQueryError, PostgresStore } from "../src/index.js";
import { spawnChild } from "./helpers/children.js";
import { databaseUrl, dropSchema, uniqueSchema, useAdminPool } from "./helpers/database.js";

const admin = useAdminPool();
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const BATCH = 3;

/** A store in a fresh schema with one session of one turn; removed after the test. */
async function session(applicationName?: string) {
  const schema = uniqueSchema();
  const url =
    applicationName === undefined ? databaseUrl() : `${databaseUrl()}?application_name=${applicationName}`;
  const store = new PostgresStore({ url, schema, maxConnections: 1 });
  cleanup.push(() => dropSchema(admin(), schema));
  cleanup.push(() => store.close());
  const log = await SessionLog.create(store, { systemPrompt: "crash", config: {} });
  return { schema, store, log };
}

/** Waits until the server has finished (or rolled back) every statement of a killed client. */
async function serverIdle(): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    const active = await admin().query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%podkit_entries%' AND pid <> pg_backend_pid() AND state <> 'idle'",
    );
    if (active.rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Batches found in a segment: every batch must be whole (all BATCH entries, in order) or absent. */
async function batchesIn(store: PostgresStore, sessionId: string, segmentId: string): Promise<number[]> {
  const texts: string[] = [];
  for await (const entry of store.readAll({ sessionId, segmentId }) as AsyncIterable<Entry>) {
    if (entry.kind === "user_input") texts.push(entry.text.replace(/x*$/, ""));
  }
  const batches: number[] = [];
  for (let at = 0; at < texts.length; at += BATCH) {
    const batch = Number((texts[at] as string).split("-")[1]);
    expect(texts.slice(at, at + BATCH)).toEqual(Array.from({ length: BATCH }, (_, n) => `w-${batch}-${n}`));
    batches.push(batch);
  }
  return batches;
}

describe("a connection lost in the middle of appends", () => {
  it("pg_terminate_backend: every acknowledged batch is there, nothing partial, the next append works", {
    timeout: 60_000,
  }, async () => {
    const victim = `podkit_victim_${process.pid}`;
    const { store, log } = await session(victim);
    const acknowledged: number[] = [];
    let failure: unknown;
    let stopped = false;
    const writing = (async () => {
      for (let batch = 0; batch < 100_000 && failure === undefined && !stopped; batch++) {
        const entries = Array.from({ length: BATCH }, (_, n) => ({
          kind: "user_input" as const,
          text: `w-${batch}-${n}`,
        }));
        try {
          await log.appendMany(entries);
          acknowledged.push(batch);
        } catch (error) {
          failure = error;
        }
      }
    })();
    while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 2));
    // Terminate the writer's backend while a statement of it is running. A termination that
    // lands between two appends only costs the pool a reconnect (the next append succeeds on a
    // fresh connection, which is right too), so keep trying until one lands mid-append.
    for (let tries = 0; failure === undefined && tries < 500; tries++) {
      await admin().query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'",
        [victim],
      );
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    stopped = true;
    await writing;

    expect(PostgresQueryError.isInstance(failure)).toBe(true);
    const found = await batchesIn(store, log.sessionId, log.segmentId);
    // Every acknowledged batch, in order; at most the one in flight beyond them (committed, but
    // its acknowledgement lost with the connection).
    expect(found.slice(0, acknowledged.length)).toEqual(acknowledged);
    expect(found.length - acknowledged.length).toBeLessThanOrEqual(1);

    // The next append works: through the same store (a fresh connection) and a reopened log.
    const reopened = await SessionLog.open(store, log.sessionId);
    const next = await reopened.append({ kind: "user_input", text: "after" });
    expect(next).toMatchObject({ segmentId: log.segmentId, driftFork: null });
    expect(await store.entryCount(log.ref)).toBe(1 + found.length * BATCH + 1);
  });

  it("a client SIGKILLed mid-transaction: every acknowledged batch is there, nothing partial, the next append works", {
    timeout: 60_000,
  }, async () => {
    const { schema, store, log } = await session();
    // Large entries, so the process is nearly always inside an append when it dies.
    const child = spawnChild("writer-child.mjs", [
      databaseUrl(),
      schema,
      log.sessionId,
      log.segmentId,
      "w",
      "100000",
      String(BATCH),
      "200000",
    ]);
    cleanup.push(async () => {
      child.child.kill("SIGKILL");
    });
    expect(await child.next()).toBe("ready");
    child.send("go");
    const acknowledged: number[] = [];
    while (acknowledged.length < 10)
      acknowledged.push((JSON.parse(await child.next()) as { batch: number }).batch);
    child.child.kill("SIGKILL");
    await child.exited;
    // Lines printed before the kill that were not read yet are acknowledgements too.
    for (;;) {
      const line = await child.next().catch(() => undefined);
      if (line === undefined) break;
      acknowledged.push((JSON.parse(line) as { batch: number }).batch);
    }

    // The server notices the dead client and rolls its transaction back; wait until it is gone.
    await serverIdle();
    const found = await batchesIn(store, log.sessionId, log.segmentId);
    expect(found.slice(0, acknowledged.length)).toEqual(acknowledged);
    expect(found.length - acknowledged.length).toBeLessThanOrEqual(1);
    const reopened = await SessionLog.open(store, log.sessionId);
    expect(await reopened.append({ kind: "user_input", text: "after" })).toMatchObject({
      segmentId: log.segmentId,
      driftFork: null,
    });
  });

  it("clients SIGKILLed while appending with group commit: every acknowledged append is there, whole, none doubled", {
    timeout: 180_000,
  }, async () => {
    const { schema, store, log } = await session();
    const KILLS = 6;
    const PAD = 20_000;
    let sharedWrites = 0;
    const acknowledged = new Map<string, number>();
    for (let kill = 0; kill < KILLS; kill++) {
      const name = `k${kill}`;
      const child = spawnChild("writer-child.mjs", [
        databaseUrl(),
        schema,
        log.sessionId,
        log.segmentId,
        name,
        "forever",
        "6",
        String(PAD),
      ]);
      cleanup.push(async () => {
        child.child.kill("SIGKILL");
      });
      expect(await child.next()).toBe("ready");
      child.send("go");
      const wanted = 5 + ((kill * 7) % 25);
      let acks = 0;
      const read = (line: string) => {
        if (line.startsWith("batch ")) sharedWrites++;
        else {
          acknowledged.set(`${name}-${(JSON.parse(line) as { n: number }).n}`, kill);
          acks++;
        }
      };
      while (acks < wanted) read(await child.next());
      child.child.kill("SIGKILL");
      await child.exited;
      // Lines printed before the kill that were not read yet count too.
      for (;;) {
        const line = await child.next().catch(() => undefined);
        if (line === undefined) break;
        read(line);
      }
      await serverIdle();
      // Every acknowledged append is there exactly once and whole; the segment reads cleanly.
      const texts: string[] = [];
      for await (const entry of store.readAll(log.ref) as AsyncIterable<Entry>) {
        if (entry.kind !== "user_input") continue;
        expect(entry.text.length).toBeGreaterThan(PAD);
        expect(entry.text.endsWith("x".repeat(PAD))).toBe(true);
        texts.push(entry.text.slice(0, entry.text.length - PAD));
      }
      expect(new Set(texts).size).toBe(texts.length);
      for (const id of acknowledged.keys()) expect(texts, `kill ${kill}: ${id}`).toContain(id);
      // Each client's appends are in the order it made them, with no gap before an acknowledged one.
      const mine = texts
        .filter((text) => text.startsWith(`${name}-`))
        .map((text) => Number(text.split("-")[1]));
      expect(mine).toEqual(Array.from({ length: mine.length }, (_, i) => i));
    }
    expect(acknowledged.size).toBeGreaterThan(KILLS * 5);
    // Group commit was on: bursts went out as shared statements.
    expect(sharedWrites).toBeGreaterThan(0);
    const reopened = await SessionLog.open(store, log.sessionId);
    expect(await reopened.append({ kind: "user_input", text: "after" })).toMatchObject({ driftFork: null });
  });
});
