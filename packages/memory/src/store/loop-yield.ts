import { setImmediate as nextTurn } from "node:timers/promises";

/** How long a pass over records may hold the event loop before it lets other work run (ms). */
export const LOOP_SLICE_MS = 8;

/**
 * A checkpoint for passes that touch every record (loading and linting a whole tree): awaited
 * between records, it returns to the event loop once the current slice has used `sliceMs`, so a
 * pod streaming a turn meanwhile is never stalled for the whole pass.
 */
export function loopYielder(sliceMs = LOOP_SLICE_MS): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < sliceMs) return;
    await nextTurn();
    sliceStart = performance.now();
  };
}

/** File operations in flight at once in whole-tree passes. */
export const FILE_BATCH = 64;

/**
 * `Promise.all(items.map(fn))` in batches of `size`: thousands of file operations finishing at
 * once would run all their callbacks in one event-loop phase, stalling everything else.
 */
export async function mapInBatches<T, R>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size)
    out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}
