import assert from "node:assert/strict";
import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import type { SessionLog, SessionLogOptions } from "../log/session-log.js";
import type { SegmentRef, Store } from "../store/store.js";

/**
 * Every committed entry of a segment, in order. The segment is read both with `readAll` and with
 * `readFrom(ref, 0)`, which must give the same entries, so every case that reads checks both.
 */
export async function readEntries(store: Store<MinimalItem>, ref: SegmentRef): Promise<Entry<MinimalItem>[]> {
  const entries: Entry<MinimalItem>[] = [];
  for await (const entry of store.readAll(ref)) entries.push(entry);
  const batched = await readFromIndex(store, ref, 0);
  assert.deepEqual(batched, entries, "readFrom(ref, 0) must give readAll's entries, in order");
  return entries;
}

/** The entries `readFrom(ref, from)` yields, flattened (each batch must be non-empty). */
export async function readFromIndex(
  store: Store<MinimalItem>,
  ref: SegmentRef,
  from: number,
  signal?: AbortSignal,
): Promise<Entry<MinimalItem>[]> {
  const entries: Entry<MinimalItem>[] = [];
  for await (const batch of store.readFrom(ref, from, signal === undefined ? {} : { signal })) {
    assert.ok(batch.length > 0, "readFrom yields no empty batches");
    entries.push(...batch);
  }
  return entries;
}

/** Texts of the `user_input` entries of a segment, in order. */
export async function inputTexts(store: Store<MinimalItem>, ref: SegmentRef): Promise<string[]> {
  return (await readEntries(store, ref)).flatMap((entry) =>
    entry.kind === "user_input" ? [entry.text] : [],
  );
}

/** Texts of the user messages of a history. */
export function userTexts(history: readonly MinimalItem[]): string[] {
  return history
    .filter((item) => (item as { role?: unknown }).role === "user")
    .map((item) => ((item as unknown as { content: { text: string }[] }).content[0]?.text ?? "") as string);
}

/** The ref of a log's current segment. */
export function refOf(log: SessionLog<MinimalItem>): SegmentRef {
  return { sessionId: log.sessionId, segmentId: log.segmentId };
}

/** One complete turn: invoke, the user's text, turn_end, run_completed. */
export async function completeTurn(log: SessionLog<MinimalItem>, text: string, turn: number): Promise<void> {
  await log.appendMany([
    { kind: "invoke", trigger: "user" },
    { kind: "user_input", text },
    { kind: "turn_end", turn },
    { kind: "run_completed", result: "finished", interrupted: false },
  ]);
}

/** A clock the test moves by hand, so the head rule's `ts` comparisons are exact. */
export function manualClock(start = 1_760_000_000_000): {
  options: SessionLogOptions<MinimalItem>;
  set(t: number): void;
} {
  let now = start;
  return {
    options: { now: () => now },
    set(t: number) {
      now = start + t;
    },
  };
}
