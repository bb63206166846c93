import assert from "node:assert/strict";
import type { EntryInput, MinimalItem } from "../entry/entry-schema.js";
import { NotFoundError, SessionStoreUsageError } from "../errors.js";
import { newId } from "../ids.js";
import { SessionLog } from "../log/session-log.js";
import type { CaseContext } from "./harness.js";
import { readEntries, readFromIndex, refOf } from "./helpers.js";

const texts = (entries: readonly { kind: string; text?: string }[]) =>
  entries.map((entry) => (entry.kind === "user_input" ? entry.text : entry.kind));

const inputs = (prefix: string, n: number, pad = ""): EntryInput<MinimalItem>[] =>
  Array.from({ length: n }, (_, i) => ({ kind: "user_input", text: `${prefix}-${i}${pad}` }));

/** The incremental read: `readFrom(ref, from)` gives the committed entries at `from` and after. */
export function readFromCases({ it }: CaseContext): void {
  it("readFrom gives the entries from an index on, in order; past the end it gives none", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: "read from", config: {} });
    await log.appendMany(inputs("a", 30));
    const all = await readEntries(store, refOf(log));
    assert.equal(all.length, 31);
    for (const from of [0, 1, 10, 30]) {
      assert.deepEqual(await readFromIndex(store, refOf(log), from), all.slice(from), `from ${from}`);
    }
    assert.deepEqual(await readFromIndex(store, refOf(log), 31), []);
    assert.deepEqual(await readFromIndex(store, refOf(log), 1_000), []);
  });

  it("readFrom follows a live segment: each read from the last count gives exactly what was appended since", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: "follow", config: {} });
    // Long lines, so a file store reads the segment in several chunks.
    const pad = "y".repeat(3_000);
    let seen = 1;
    for (let round = 0; round < 12; round++) {
      const added = inputs(`r${round}`, 1 + ((round * 7) % 40), pad);
      await log.appendMany(added);
      const read = await readFromIndex(store, refOf(log), seen);
      assert.deepEqual(texts(read), texts(added), `round ${round}`);
      seen += added.length;
    }
    assert.equal(seen, log.entryCount);
    assert.deepEqual(await readFromIndex(store, refOf(log), 0), await readEntries(store, refOf(log)));
  });

  it("readFrom after a truncation gives what is there now, never entries cut away", async ({ store }) => {
    const log = await SessionLog.create(store, { systemPrompt: "truncated", config: {} });
    await log.appendMany(inputs("kept", 5));
    await log.appendMany(inputs("cut", 10));
    assert.deepEqual(texts(await readFromIndex(store, refOf(log), 8)), texts(inputs("cut", 10).slice(2)));
    await log.truncate(6);
    assert.deepEqual(await readFromIndex(store, refOf(log), 8), []);
    assert.deepEqual(await readFromIndex(store, refOf(log), 6), []);
    await log.appendMany(inputs("new", 6));
    assert.deepEqual(texts(await readFromIndex(store, refOf(log), 8)), texts(inputs("new", 6).slice(2)));
    assert.deepEqual(texts(await readFromIndex(store, refOf(log), 5)), [
      "kept-4",
      ...texts(inputs("new", 6)),
    ]);
  });

  it("readFrom sees what another process appended, and its truncations", async (harness) => {
    const log = await SessionLog.create(harness.store, { systemPrompt: "two", config: {} });
    await log.appendMany(inputs("first", 4));
    assert.deepEqual(texts(await readFromIndex(harness.store, refOf(log), 3)), ["first-2", "first-3"]);
    const other = await SessionLog.open(harness.openSecond(), log.sessionId);
    await other.appendMany(inputs("other", 3));
    assert.deepEqual(texts(await readFromIndex(harness.store, refOf(log), 3)), [
      "first-2",
      "first-3",
      "other-0",
      "other-1",
      "other-2",
    ]);
    await other.truncate(4);
    await other.appendMany(inputs("again", 2));
    assert.deepEqual(texts(await readFromIndex(harness.store, refOf(log), 3)), [
      "first-2",
      "again-0",
      "again-1",
    ]);
  });

  it("readFrom refuses a negative or fractional index, reports a missing segment, and stops on abort", async ({
    store,
  }) => {
    const log = await SessionLog.create(store, { systemPrompt: null, config: {} });
    await log.appendMany(inputs("x", 3));
    const usage = (error: unknown) => SessionStoreUsageError.isInstance(error);
    await assert.rejects(readFromIndex(store, refOf(log), -1), usage);
    await assert.rejects(readFromIndex(store, refOf(log), 1.5), usage);
    await assert.rejects(readFromIndex(store, { sessionId: log.sessionId, segmentId: newId() }, 0), (error) =>
      NotFoundError.isInstance(error),
    );
    const reason = new Error("stop reading");
    await assert.rejects(
      readFromIndex(store, refOf(log), 0, AbortSignal.abort(reason)),
      (error) => error === reason,
    );
  });
}
