import assert from "node:assert/strict";
import type { EntryInput, MinimalItem } from "../entry/entry-schema.js";
import { NotFoundError, SessionStoreUsageError } from "../errors.js";
import { newId } from "../ids.js";
import { restoreSession, SessionLog } from "../log/session-log.js";
import type { CaseContext } from "./harness.js";
import { inputTexts, readEntries, refOf, userTexts } from "./helpers.js";

/** Entries in append order, items byte-identical, conditional appends, listings. */
export function basicCases({ it }: CaseContext): void {
  it("keeps entries in call order, even for appends fired without awaiting", async ({ store }) => {
    const log = await SessionLog.create(store, { systemPrompt: "order", config: {} });
    const texts = Array.from({ length: 20 }, (_, i) => `message ${i}`);
    const pending = texts.slice(0, 17).map((text) => log.append({ kind: "user_input", text }));
    pending.push(log.appendMany(texts.slice(17).map((text) => ({ kind: "user_input", text }))));
    const results = await Promise.all(pending);
    assert.deepEqual(
      results.map((result) => result.index),
      [...Array.from({ length: 17 }, (_, i) => i + 1), 18],
    );
    assert.deepEqual(await inputTexts(store, refOf(log)), texts);
    assert.equal(await store.entryCount(refOf(log)), 21);
    assert.deepEqual(userTexts((await restoreSession(store, log.sessionId)).history), texts);
  });

  it("returns every item and entry byte-identical to what was appended", async ({ store }) => {
    const item = {
      zeta: 1,
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: 'é \u2028 😀 "quoted" \\ \n\t\u0000' }],
      "": "empty key",
      big: 1.5e300,
      nested: { b: [null, true, -0.5, { y: 1, x: 2 }], a: {} },
      providerMetadata: { anthropic: { signature: "c2lnbmF0dXJl" } },
    } as MinimalItem;
    const log = await SessionLog.create(store, { systemPrompt: "verbatim ✓", config: { z: 1, a: 2 } });
    await log.append({ kind: "assistant_item", item });
    // An unknown extra field on a known kind is kept, in place.
    await log.append({ kind: "user_input", text: "hi", x_extra: { b: 1, a: 2 } } as EntryInput<MinimalItem>);
    const [start, assistant, input] = await readEntries(store, refOf(log));
    assert.equal(
      JSON.stringify(assistant && "item" in assistant ? assistant.item : null),
      JSON.stringify(item),
    );
    assert.match(JSON.stringify(input), /"text":"hi","x_extra":\{"b":1,"a":2\}/);
    assert.equal(JSON.stringify(start && "config" in start ? start.config : null), '{"z":1,"a":2}');
    const state = await restoreSession(store, log.sessionId);
    assert.equal(JSON.stringify(state.history[0]), JSON.stringify(item));
    assert.equal(state.systemPrompt, "verbatim ✓");
  });

  it("reads a large segment in batches exactly as entry by entry, and restores from either", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: "batches", config: {} });
    // Well over a 1 MiB read chunk, so a file store yields several batches.
    const text = "x".repeat(2_000);
    for (let at = 0; at < 1_200; at += 200) {
      await log.appendMany(
        Array.from({ length: 200 }, (_, i) => ({ kind: "user_input", text: `${at + i} ${text}` })),
      );
    }
    const entries = await readEntries(store, refOf(log));
    assert.equal(entries.length, 1_201);
    const restored = await restoreSession(store, log.sessionId);
    assert.equal(restored.entryCount, 1_201);
    assert.deepEqual(userTexts(restored.history).at(-1), `1199 ${text}`);
  });

  it("appends with an expected count only when the segment holds exactly that many entries", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: null, config: {} });
    await log.append({ kind: "user_input", text: "one" });
    const entry = { kind: "user_input", ts: 1, text: "two" } as const;
    assert.deepEqual(await store.append(refOf(log), [entry], { expectedCount: 1 }), {
      status: "drift",
      count: 2,
    });
    assert.deepEqual(await inputTexts(store, refOf(log)), ["one"]);
    assert.deepEqual(await store.append(refOf(log), [entry, entry], { expectedCount: 2 }), {
      status: "appended",
      count: 4,
    });
    assert.deepEqual(await store.append(refOf(log), [entry]), { status: "appended", count: 5 });
    assert.equal(await store.entryCount(refOf(log)), 5);
  });

  it("creates a segment whole, never over an existing one", async ({ store }) => {
    const log = await SessionLog.create(store, { systemPrompt: "first", config: {} });
    const [start] = await readEntries(store, refOf(log));
    assert.ok(start);
    await assert.rejects(store.createSegment(refOf(log), [start]), (error) =>
      SessionStoreUsageError.isInstance(error),
    );
    assert.equal(await store.entryCount(refOf(log)), 1);
    const summary = await store.describeSegment(refOf(log));
    assert.equal(summary.entryCount, 1);
    assert.equal(summary.start.kind, "segment_start");
    assert.equal(JSON.stringify(summary.last), JSON.stringify(start));
  });

  it("describes a segment by its first and last entries and its count", async ({ store }) => {
    const log = await SessionLog.create(store, { systemPrompt: "describe", config: {} });
    await log.append({ kind: "user_input", text: "a" });
    await log.append({ kind: "turn_end", turn: 1 });
    const summary = await store.describeSegment(refOf(log));
    assert.equal(summary.entryCount, 3);
    assert.equal(summary.start.kind, "segment_start");
    assert.deepEqual(
      { kind: summary.last.kind, turn: (summary.last as { turn?: number }).turn },
      { kind: "turn_end", turn: 1 },
    );
  });

  it("lists sessions and segments newest first and finds the session of a segment", async ({ store }) => {
    const logs = [];
    for (let i = 0; i < 3; i++)
      logs.push(await SessionLog.create(store, { systemPrompt: `s${i}`, config: {} }));
    assert.deepEqual(await store.listSessions(), logs.map((log) => log.sessionId).reverse());
    const first = logs[0] as SessionLog<MinimalItem>;
    await first.append({ kind: "turn_end", turn: 1 });
    const branch = await SessionLog.forkAt(store, first.segmentId, 1);
    assert.deepEqual(await store.listSegments(first.sessionId), [branch.segmentId, first.segmentId]);
    assert.equal(await store.lookupSessionOf(branch.segmentId), first.sessionId);
    assert.equal(await store.lookupSessionOf(newId()), undefined);
  });

  it("reports a missing session or segment as NotFoundError", async ({ store }) => {
    const log = await SessionLog.create(store, { systemPrompt: null, config: {} });
    const missing = { sessionId: log.sessionId, segmentId: newId() };
    const notFound = (error: unknown) => NotFoundError.isInstance(error);
    await assert.rejects(readEntries(store, missing), notFound);
    await assert.rejects(store.entryCount(missing), notFound);
    await assert.rejects(store.describeSegment(missing), notFound);
    await assert.rejects(store.listSegments(newId()), notFound);
    await assert.rejects(restoreSession(store, newId()), notFound);
  });
}
