import { memoryPaths, RECORD_KINDS, type RecordKind } from "../records/layout.js";
import { MemoryStore, type MemoryStoreOptions } from "./memory-store.js";
import { memoryTreeStamp, quickTreeStamp } from "./tree-stamp.js";

/** How often a cached tree is re-checked file by file for edits made in place (ms). */
export const FULL_SWEEP_INTERVAL_MS = 30_000;

/**
 * Something loaded from the memory trees (a store, the knowledge index), kept while they are
 * unchanged and reloaded when a consolidation, an extract or a person changed them. A call costs a
 * few `stat`s (`quickTreeStamp`: the writers' stamp file and the record directories) whatever the
 * size of memory; every `sweepIntervalMs` it also sweeps every record file (`memoryTreeStamp`), so
 * an edit made in place by a person is seen within that interval.
 */
export function cachedTree<T>(
  workspace: string,
  load: () => Promise<T>,
  options: { kinds?: readonly RecordKind[]; sweepIntervalMs?: number } = {},
): () => Promise<T> {
  const paths = memoryPaths(workspace);
  const kinds = options.kinds ?? RECORD_KINDS;
  const interval = options.sweepIntervalMs ?? FULL_SWEEP_INTERVAL_MS;
  let cached: { quick: string; full: string; sweptAt: number; value: Promise<T> } | undefined;
  return async () => {
    // Stamped before loading: a change made during the load makes the next call reload.
    const quick = await quickTreeStamp(paths, kinds);
    let full = cached?.full;
    const due = cached === undefined || performance.now() - cached.sweptAt >= interval;
    if (cached?.quick !== quick || due) full = await memoryTreeStamp(paths, kinds);
    if (cached === undefined || cached.quick !== quick || cached.full !== full) {
      const value = load();
      const entry = { quick, full: full ?? "", sweptAt: performance.now(), value };
      cached = entry;
      value.catch(() => {
        if (cached === entry) cached = undefined;
      });
    } else if (due) cached.sweptAt = performance.now();
    return cached.value;
  };
}

/** The store of a pod's main-worker tools, cached as `cachedTree` describes. */
export function cachedMemoryStore(
  workspace: string,
  options: MemoryStoreOptions = {},
  cache: { sweepIntervalMs?: number } = {},
): () => Promise<MemoryStore> {
  return cachedTree(workspace, () => MemoryStore.open(workspace, options), cache);
}
