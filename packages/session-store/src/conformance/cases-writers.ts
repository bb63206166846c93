import assert from "node:assert/strict";
import type { MinimalItem } from "../entry/entry-schema.js";
import { SessionStoreUsageError } from "../errors.js";
import { type AppendResult, SessionLog } from "../log/session-log.js";
import type { CaseContext } from "./harness.js";
import { completeTurn, inputTexts, readEntries, refOf, userTexts } from "./helpers.js";

/** One writer per segment; a writer that finds it changed forks with lineage; truncate. */
export function writerCases({ it }: CaseContext): void {
  it("a writer whose segment changed forks with lineage instead of interleaving", async (harness) => {
    const a = await SessionLog.create(harness.store, { systemPrompt: "drift", config: {} });
    await completeTurn(a, "before", 1);
    const b = await SessionLog.open(harness.openSecond(), a.sessionId);
    const source = a.segmentId;
    assert.equal((await a.append({ kind: "user_input", text: "a-after" })).driftFork, null);
    const drifted = await b.append({ kind: "user_input", text: "b-after" });
    assert.deepEqual(drifted.driftFork, {
      fromSegmentId: source,
      toSegmentId: drifted.segmentId,
      expectedCount: 5,
      actualCount: 6,
    });
    assert.notEqual(drifted.segmentId, source);
    assert.deepEqual(await inputTexts(harness.store, { sessionId: a.sessionId, segmentId: source }), [
      "before",
      "a-after",
    ]);
    assert.deepEqual(b.state.lineage.forkedFrom, { segmentId: source, atTurn: 1 });
    const fork = await SessionLog.openSegment(harness.store, refOf(b));
    assert.deepEqual(userTexts(fork.state.history), ["before", "b-after"]);
    assert.equal(fork.state.turn, 1);
  });

  it("two writers racing on one segment: one keeps it, the other forks, nothing interleaves or is lost", async (harness) => {
    const setup = await SessionLog.create(harness.store, { systemPrompt: "race", config: {} });
    await completeTurn(setup, "before", 1);
    const source = refOf(setup);
    const writers = [
      await SessionLog.open(harness.store, setup.sessionId),
      await SessionLog.open(harness.openSecond(), setup.sessionId),
    ];
    const sent = writers.map((_, w) => Array.from({ length: 8 }, (_, i) => `writer${w}-${i}`));
    const results = await Promise.all(
      writers.map((log, w) =>
        Promise.all((sent[w] as string[]).map((text) => log.append({ kind: "user_input", text }))),
      ),
    );
    const forked = results.map((list) => list.some((result: AppendResult) => result.driftFork !== null));
    assert.equal(forked.filter(Boolean).length, 1, "exactly one writer forks");
    const winner = forked.indexOf(false);
    const loser = 1 - winner;
    assert.deepEqual(await inputTexts(harness.store, source), ["before", ...(sent[winner] as string[])]);
    const loserLog = writers[loser] as SessionLog<MinimalItem>;
    assert.notEqual(loserLog.segmentId, source.segmentId);
    assert.deepEqual(await inputTexts(harness.store, refOf(loserLog)), sent[loser]);
    assert.deepEqual(
      userTexts((await SessionLog.openSegment(harness.store, refOf(loserLog))).state.history),
      ["before", ...(sent[loser] as string[])],
    );
  });

  it("truncates a segment back to its first entries, only when asked and only within it", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: null, config: {} });
    await completeTurn(log, "kept", 1);
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "cancelled" });
    const inFlight = log.state.inFlight;
    assert.ok(inFlight);
    const result = await log.truncate(inFlight.entryIndex);
    assert.equal(result.driftFork, null);
    assert.deepEqual(await inputTexts(store, refOf(log)), ["kept"]);
    assert.equal(log.state.inFlight, null);
    assert.equal(await store.entryCount(refOf(log)), 5);
    const usage = (error: unknown) => SessionStoreUsageError.isInstance(error);
    await assert.rejects(store.truncate(refOf(log), 6), usage);
    await assert.rejects(store.truncate(refOf(log), 0), usage);
    assert.deepEqual(await store.truncate(refOf(log), 2, { expectedCount: 4 }), {
      status: "drift",
      count: 5,
    });
    assert.equal(await store.entryCount(refOf(log)), 5);
    assert.deepEqual(await store.truncate(refOf(log), 2, { expectedCount: 5 }), {
      status: "truncated",
      count: 2,
    });
    assert.equal((await readEntries(store, refOf(log))).length, 2);
    // Appending after a truncation continues right after the kept entries.
    assert.deepEqual(await store.append(refOf(log), [{ kind: "turn_end", ts: 1, turn: 1 }]), {
      status: "appended",
      count: 3,
    });
  });

  it("a truncate that finds the segment changed forks instead of cutting someone else's entries", async (harness) => {
    const a = await SessionLog.create(harness.store, { systemPrompt: null, config: {} });
    await completeTurn(a, "before", 1);
    const b = await SessionLog.open(harness.openSecond(), a.sessionId);
    await a.append({ kind: "invoke", trigger: "user" });
    await a.append({ kind: "user_input", text: "a-after" });
    // b still believes the segment holds 5 entries; a rollback to 4 would cut a's entries.
    const result = await b.truncate(4);
    assert.equal(result.driftFork?.fromSegmentId, a.segmentId);
    assert.deepEqual(await inputTexts(harness.store, refOf(a)), ["before", "a-after"]);
    assert.equal(await harness.store.entryCount(refOf(a)), 7);
    assert.notEqual(b.segmentId, a.segmentId);
    assert.deepEqual(userTexts((await SessionLog.openSegment(harness.store, refOf(b))).state.history), [
      "before",
    ]);
  });
}
