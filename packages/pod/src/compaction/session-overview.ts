import { type Item, messageText } from "@podkit/llm-worker";
import type { HistorySource } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";

const LINE_CHARS = 600;

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}… (${flat.length} chars, cut)`;
}

/** One line of the overview for an item: who said what, abridged; tool output only as its summary. */
export function overviewLine(item: Item, index: number, source: HistorySource | undefined): string {
  const at = `#${index}`;
  switch (item.type) {
    case "message": {
      const text = messageText(item);
      if (item.role === "user") return `${at} [User] ${cut(text, LINE_CHARS)}`;
      if (item.role === "assistant") return `${at} [Assistant] ${cut(text, LINE_CHARS)}`;
      const kind = source?.from === "system_item" ? source.item.kind : "system";
      return `${at} [System:${kind}] ${cut(text, LINE_CHARS / 2)}`;
    }
    case "tool_call":
      return `${at} [ToolCall ${item.call_id}] ${item.name} ${cut(item.arguments, LINE_CHARS / 3)}`;
    case "tool_result": {
      const size = item.content === undefined ? "" : ` (+${Buffer.byteLength(item.content)} bytes of output)`;
      return `${at} [ToolResult ${item.call_id}${item.is_error ? ", error" : ""}] ${cut(item.summary, LINE_CHARS / 2)}${size}`;
    }
    case "reasoning":
      return `${at} [Reasoning] (omitted)`;
    case "provider_tool_call":
      return `${at} [ProviderToolCall ${item.call_id}] ${item.name}`;
    case "provider_tool_result":
      return `${at} [ProviderToolResult ${item.call_id}] ${item.name}`;
    case "compaction":
      return `${at} [ProviderCompaction] ${cut(item.text, LINE_CHARS)}`;
  }
}

/**
 * A bounded overview of the part to summarise (never the whole transcript): one abridged line per
 * item, and when that exceeds `maxBytes`, the beginning and the end with the middle left out and
 * the catalog's `compact_overview_gap` line saying which items to read with `read_session_items`.
 */
export function sessionOverview(
  items: readonly Item[],
  sources: readonly HistorySource[],
  maxBytes: number,
  catalog: PromptCatalog,
): string {
  const byIndex = new Map(sources.map((source) => [source.index, source]));
  const lines = items.map((item, index) => overviewLine(item, index, byIndex.get(index)));
  const total = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
  if (total <= maxBytes) return lines.join("\n");
  const head: string[] = [];
  const tail: string[] = [];
  // Room for the gap line (its numbers are at most the item count).
  const gapBytes = Buffer.byteLength(
    catalog.render("compact_overview_gap", { first: items.length, last: items.length }),
  );
  let budget = maxBytes - gapBytes - 1;
  let first = 0;
  let last = lines.length - 1;
  // Alternate ends so both the start of the work and its latest state are shown.
  while (first <= last) {
    const fromHead = head.length <= tail.length;
    const line = (fromHead ? lines[first] : lines[last]) as string;
    const cost = Buffer.byteLength(line) + 1;
    if (cost > budget) break;
    budget -= cost;
    if (fromHead) head.push(lines[first++] as string);
    else tail.unshift(lines[last--] as string);
  }
  const gap = catalog.render("compact_overview_gap", { first, last });
  return [...head, gap, ...tail].join("\n");
}
