import type { Item } from "@podkit/llm-worker";
import type { Entry, SegmentRef, Store } from "@podkit/session-store";

/**
 * The committed entries of a segment at index ≥ `from` (0 is its `segment_start`), in batches.
 * The ONE place the server reads a log incrementally: until the store has an incremental read
 * (`Store.readFrom`), it reads the whole segment and skips the first `from` entries; swap the
 * body for `store.readFrom(ref, from, { signal })` when it lands.
 */
export async function* readSegmentFrom(
  store: Store<Item>,
  ref: SegmentRef,
  from: number,
  signal?: AbortSignal,
): AsyncIterable<readonly Entry<Item>[]> {
  let index = 0;
  const batches = store.readBatches?.(ref) ?? singleEntries(store.readAll(ref));
  for await (const batch of batches) {
    signal?.throwIfAborted();
    const start = Math.max(0, from - index);
    index += batch.length;
    if (start < batch.length) yield start === 0 ? batch : batch.slice(start);
  }
}

async function* singleEntries(entries: AsyncIterable<Entry<Item>>): AsyncIterable<readonly Entry<Item>[]> {
  for await (const entry of entries) yield [entry];
}
