import { type Item, textMessage } from "@podkit/llm-worker";
import type { HistorySource, SystemItem } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { ContextUpdate } from "../context/context-sections.js";
import type { AutoReadFile, CompactReference } from "./compact-tools.js";

export interface CompactedHistory {
  readonly history: Item[];
  /** Origins of its system items (kinds, context keys), for `segment_start.history_sources`. */
  readonly sources: HistorySource[];
}

const systemMessage = (body: string): Item => ({
  type: "message",
  role: "system",
  content: [{ type: "text", text: body }],
});

/**
 * The history of the segment after a compaction: the summary, the auto-read files, the
 * reference list, what a feature carries over (the active skills' bodies), the retained tail verbatim — without its context blocks, which the current one
 * replaces — and the current context block, so it appears exactly once in the new segment.
 */
export function buildCompactedHistory(input: {
  catalog: PromptCatalog;
  summary: string;
  autoRead: readonly AutoReadFile[];
  references: readonly CompactReference[];
  /** Attachments carried over as they are (skill bodies, `attachment` items), after the references. */
  carried?: readonly SystemItem[];
  /** The old history, its sources, and where the retained tail starts. */
  items: readonly Item[];
  sources: readonly HistorySource[];
  split: number;
  context: ContextUpdate | null;
}): CompactedHistory {
  const { catalog } = input;
  const history: Item[] = [
    textMessage("user", catalog.render("compacted_context_summary", { summary: input.summary })),
  ];
  const sources: HistorySource[] = [];
  const addSystem = (item: SystemItem) => {
    sources.push({ index: history.length, from: "system_item", item });
    history.push(systemMessage(item.body));
  };
  for (const file of input.autoRead) {
    addSystem({
      kind: "attachment",
      body: catalog.render("compacted_file_attachment", file),
      path: file.path,
    });
  }
  if (input.references.length > 0) {
    addSystem({
      kind: "attachment",
      body: catalog.render("compacted_references", { references: input.references }),
    });
  }
  for (const item of input.carried ?? []) addSystem(item);
  const byIndex = new Map(input.sources.map((source) => [source.index, source]));
  for (let i = input.split; i < input.items.length; i++) {
    const source = byIndex.get(i);
    if (source?.from === "system_item" && source.item.kind === "context") continue;
    if (source !== undefined) sources.push({ ...source, index: history.length });
    history.push(input.items[i] as Item);
  }
  if (input.context !== null)
    addSystem({ kind: "context", body: input.context.body, key: input.context.key });
  return { history, sources };
}
