import { lintRecord, type ParsedRecord } from "../lint/lint-record.js";
import { memoryPaths } from "../records/layout.js";
import type { InvocableKnowledgeView } from "../worker/memory-model.js";
import { loadMemoryFiles } from "./load-memory-files.js";
import { loopYielder } from "./loop-yield.js";
import { cachedTree } from "./store-cache.js";

/**
 * The knowledge entries a pod may call up (`model_invocation: true`), parsed from
 * `.podkit/knowledge` only and cached like the main worker's store: the memory context section
 * lists them before every request, so a warm call must cost a few `stat`s, not a parse.
 */
export function cachedInvocableKnowledge(workspace: string): () => Promise<readonly ParsedRecord[]> {
  const paths = memoryPaths(workspace);
  return cachedTree(
    workspace,
    async () => {
      const checkpoint = loopYielder();
      const out: ParsedRecord[] = [];
      for (const file of await loadMemoryFiles(paths, ["knowledge"])) {
        await checkpoint();
        const { record } = lintRecord(file);
        if (record?.kind === "knowledge" && record.frontmatter.model_invocation === true) out.push(record);
      }
      return out.sort((a, b) => (a.slug < b.slug ? -1 : 1));
    },
    { kinds: ["knowledge"] },
  );
}

/** What the memory section offers of them: name and description, in slug order (a stable block). */
export function invocableKnowledgeView(records: readonly ParsedRecord[]): InvocableKnowledgeView[] {
  return records.map((r) => ({ slug: r.slug, description: String(r.frontmatter.description ?? "") }));
}
