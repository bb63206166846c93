import { memoryPaths } from "../records/layout.js";
import { MemoryStore, type MemoryStoreOptions } from "./memory-store.js";
import { memoryTreeStamp } from "./tree-stamp.js";

/**
 * The store of a pod's main-worker tools: loaded on the first call and kept while the record
 * files are unchanged (names, sizes, mtimes, inodes — see `memoryTreeStamp`), reloaded when a
 * consolidation, an extract or a person changed them. A query or read then costs a directory
 * scan, not a load and lint of the whole tree.
 */
export function cachedMemoryStore(
  workspace: string,
  options: MemoryStoreOptions = {},
): () => Promise<MemoryStore> {
  const paths = memoryPaths(workspace);
  let cached: { stamp: string; store: Promise<MemoryStore> } | undefined;
  return async () => {
    // Stamped before loading: a change made during the load makes the next call reload.
    const stamp = await memoryTreeStamp(paths);
    if (cached?.stamp !== stamp) {
      const store = MemoryStore.open(workspace, options);
      cached = { stamp, store };
      store.catch(() => {
        if (cached?.store === store) cached = undefined;
      });
    }
    return cached.store;
  };
}
