import { type Item, messageText } from "@podkit/llm-worker";
import type { HistorySource } from "@podkit/session-store";

const LINE_CHARS = 600;

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}… (${flat.length} chars, cut)`;
}

/** One line for an item, numbered as the compaction tools number it: who said what, abridged; tool output only as its summary. */
export function itemLine(item: Item, index: number, source: HistorySource | undefined): string {
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
