import type { LintReport } from "./lint/diagnostics.js";
import { lintMemory } from "./lint/lint-memory.js";
import { memoryPaths } from "./records/layout.js";
import { loadMemoryFiles } from "./store/load-memory-files.js";
import { MemoryStore } from "./store/memory-store.js";
import { type QueryHit, type QueryOptions, queryMemory } from "./store/query-memory.js";

/** `podkit memory lint`: the linter over the workspace's memory trees as they are on disk. */
export async function lintWorkspaceMemory(workspace: string): Promise<LintReport> {
  return lintMemory(await loadMemoryFiles(memoryPaths(workspace)));
}

/** `podkit memory query`: `memory_query` over the workspace's records (recorded as `shown` by `cli`). */
export async function queryWorkspaceMemory(workspace: string, options: QueryOptions): Promise<QueryHit[]> {
  const store = await MemoryStore.open(workspace, { by: "cli" });
  const hits = queryMemory(store.list(), options);
  for (const hit of hits) await store.noteUsage("shown", hit.kind, hit.slug);
  return hits;
}
