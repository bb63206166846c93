import assert from "node:assert/strict";
import type { MinimalItem } from "../entry/entry-schema.js";
import { describeSession } from "../log/session-head.js";
import { restoreSession, SessionLog } from "../log/session-log.js";
import type { CaseContext } from "./harness.js";
import { completeTurn, inputTexts, manualClock, readEntries, refOf, userTexts } from "./helpers.js";

/** Fork, forkAt, compaction lineage and the head rule. */
export function lineageCases({ it }: CaseContext): void {
  it("fork copies a session cut at a turn into a new session, leaving the source untouched", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: "fork", config: { k: 1 } });
    await completeTurn(log, "one", 1);
    await completeTurn(log, "two", 2);
    const fork = await SessionLog.fork(store, log.sessionId, { atTurn: 1 });
    assert.notEqual(fork.sessionId, log.sessionId);
    assert.deepEqual(userTexts(fork.state.history), ["one"]);
    assert.equal(fork.state.turn, 1);
    assert.equal(fork.state.systemPrompt, "fork");
    assert.deepEqual(fork.state.lineage.forkedFrom, { segmentId: log.segmentId, atTurn: 1 });
    assert.equal(await store.lookupSessionOf(log.segmentId), log.sessionId);
    assert.deepEqual(await inputTexts(store, refOf(log)), ["one", "two"]);
    assert.deepEqual(userTexts((await restoreSession(store, fork.sessionId)).history), ["one"]);
    assert.equal((await store.listSessions()).length, 2);
  });

  it("a fork of a long session carries its whole history byte-identically (a segment_start of megabytes)", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: "long", config: { k: 1 } });
    const filler = "é".repeat(180);
    for (let at = 0; at < 4_000; at += 500) {
      await log.appendMany(
        Array.from({ length: 500 }, (_, i) => ({
          kind: "user_input" as const,
          text: `${at + i} ${filler} "]}`,
        })),
      );
    }
    await log.append({ kind: "turn_end", turn: 1 });
    const fork = await SessionLog.fork(store, log.sessionId);
    assert.equal(fork.state.history.length, 4_000);
    const reopened = await SessionLog.openSegment(store, refOf(fork));
    assert.equal(JSON.stringify(reopened.state.history), JSON.stringify(log.state.history));
    const summary = await store.describeSegment(refOf(fork));
    assert.equal(summary.entryCount, 1);
    assert.equal(summary.start.kind === "segment_start" && summary.start.history.length, 4_000);
    assert.equal(JSON.stringify((await readEntries(store, refOf(fork)))[0]), JSON.stringify(summary.start));
  });

  it("forkAt starts a branch in the same session holding the state at the end of a turn", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: null, config: {} });
    await completeTurn(log, "one", 1);
    await log.append({
      kind: "llm_usage",
      history_len: 1,
      input_tokens: 10,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      output_tokens: 2,
    });
    await completeTurn(log, "two", 2);
    const branch = await SessionLog.forkAt(store, log.segmentId, 1);
    assert.equal(branch.sessionId, log.sessionId);
    assert.deepEqual(userTexts(branch.state.history), ["one"]);
    assert.equal(branch.state.turn, 1);
    assert.deepEqual(branch.state.lineage.forkedFrom, { segmentId: log.segmentId, atTurn: 1 });
    assert.deepEqual(await inputTexts(store, refOf(log)), ["one", "two"]);
    assert.deepEqual(await store.listSegments(log.sessionId), [branch.segmentId, log.segmentId]);
  });

  it("the head is the branch written last, not the newest segment, and other branches are listed", async (harness) => {
    const clock = manualClock();
    const a = await SessionLog.create(harness.store, { systemPrompt: "head", config: {} }, clock.options);
    await completeTurn(a, "before", 1);
    const b = await SessionLog.open(harness.openSecond(), a.sessionId, clock.options);
    clock.set(100);
    await a.append({ kind: "user_input", text: "a-1" });
    clock.set(200);
    const fork = (await b.append({ kind: "user_input", text: "b-1" })).segmentId;
    assert.notEqual(fork, a.segmentId);
    // Positive control: by id the fork is the newest segment, so "restore the newest segment"
    // would continue b's fork and hide what a writes next.
    assert.equal((await harness.store.listSegments(a.sessionId))[0], fork);
    clock.set(300);
    await a.append({ kind: "user_input", text: "a-2" });
    const restored = await SessionLog.open(harness.store, a.sessionId);
    assert.equal(restored.segmentId, a.segmentId);
    assert.deepEqual(userTexts(restored.state.history), ["before", "a-1", "a-2"]);
    assert.deepEqual(
      restored.otherBranches.map((info) => [info.segmentId, info.role, info.forkedFrom]),
      [[fork, "branch", { segmentId: a.segmentId, atTurn: 1 }]],
    );
    // Once the fork is written to last, it is the head.
    clock.set(400);
    await b.append({ kind: "user_input", text: "b-2" });
    const overview = await describeSession(harness.store, a.sessionId);
    assert.equal(overview.head.segmentId, fork);
    assert.deepEqual(
      overview.otherBranches.map((info) => info.segmentId),
      [a.segmentId],
    );
    assert.deepEqual(userTexts((await restoreSession(harness.store, a.sessionId)).history), [
      "before",
      "b-1",
      "b-2",
    ]);
  });

  it("a compacted segment is replaced by its compaction unless written to afterwards", async (harness) => {
    const clock = manualClock();
    const log = await SessionLog.create(
      harness.store,
      { systemPrompt: "compact", config: {} },
      clock.options,
    );
    await completeTurn(log, "old", 1);
    const stale = await SessionLog.open(harness.openSecond(), log.sessionId, clock.options);
    clock.set(100);
    const summary = {
      type: "message",
      role: "user",
      content: [{ type: "text", text: "summary" }],
    } as MinimalItem;
    const compacted = await log.createCompactedSegment({ history: [summary], atTurn: 1 });
    let overview = await describeSession(harness.store, log.sessionId);
    assert.equal(overview.head.segmentId, compacted.segmentId);
    assert.deepEqual(
      overview.compacted.map((info) => [info.segmentId, info.compactedInto]),
      [[log.segmentId, compacted.segmentId]],
    );
    assert.deepEqual(userTexts((await restoreSession(harness.store, log.sessionId)).history), ["summary"]);
    // A writer that never saw the compaction keeps the old segment live, and newest.
    clock.set(200);
    await stale.append({ kind: "user_input", text: "late" });
    overview = await describeSession(harness.store, log.sessionId);
    assert.equal(overview.head.segmentId, log.segmentId);
    assert.deepEqual(
      overview.otherBranches.map((info) => info.segmentId),
      [compacted.segmentId],
    );
    assert.equal(overview.compacted.length, 0);
  });

  it("children are listed by their parent from the store's index, newest first; a root and a stranger have none", async ({
    store,
    openSecond,
  }) => {
    const root = await SessionLog.create(store, { systemPrompt: "root", config: {} });
    const link = (call: string, depth: number, parent = root.sessionId) => ({
      session_id: parent,
      call_id: call,
      role: "reviewer",
      depth,
    });
    const first = await SessionLog.create(store, { systemPrompt: "a", config: {}, parent: link("c1", 1) });
    const second = await SessionLog.create(store, { systemPrompt: "b", config: {}, parent: link("c2", 1) });
    const grandchild = await SessionLog.create(store, {
      systemPrompt: "g",
      config: {},
      parent: link("c3", 2, first.sessionId),
    });
    // A compaction of a child carries its link on: still one child, listed once.
    await completeTurn(first, "work", 1);
    await SessionLog.forkAt(store, first.segmentId, 1);
    assert.deepEqual(await store.listChildSessions(root.sessionId), [second.sessionId, first.sessionId]);
    assert.deepEqual(await openSecond().listChildSessions(root.sessionId), [
      second.sessionId,
      first.sessionId,
    ]);
    assert.deepEqual(await store.listChildSessions(first.sessionId), [grandchild.sessionId]);
    assert.deepEqual(await store.listChildSessions(grandchild.sessionId), []);
    assert.deepEqual(await store.listChildSessions("01900000-0000-7000-8000-000000000000"), []);
  });
}
