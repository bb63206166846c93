import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";

const indent = (text: string) => text.trim().replace(/\r?\n/g, "\n  ");

function itemLine(item: Item): string | undefined {
  switch (item.type) {
    case "message": {
      const text = item.content.map((part) => part.text).join("");
      if (text.trim() === "") return undefined;
      if (item.role === "user") return `[User] ${indent(text)}`;
      if (item.role === "assistant") return `[Assistant] ${indent(text)}`;
      return undefined;
    }
    case "tool_call":
    case "provider_tool_call":
      return `[ToolCall] ${item.name}`;
    case "tool_result":
      // The summary only: raw tool output (`content`) never reaches the extract worker.
      return `[ToolResult] ${indent(item.summary)}`;
    default:
      // Reasoning, provider tool results and compaction blocks are not activity to extract.
      return undefined;
  }
}

/**
 * The extract input: the history slice as flat lines — `[User] …`, `[Assistant] …`,
 * `[ToolCall] name`, `[ToolResult] summary`, `[Notification] …`. Tool output `content`,
 * reasoning, context blocks (which carry memory itself) and bookkeeping entries are left out.
 */
export function flattenEntries(entries: readonly Entry<Item>[]): string {
  const lines: string[] = [];
  for (const entry of entries) {
    let line: string | undefined;
    if (entry.kind === "user_input")
      line = entry.text.trim() === "" ? undefined : `[User] ${indent(entry.text)}`;
    else if (entry.kind === "assistant_item" || entry.kind === "tool_result") line = itemLine(entry.item);
    else if (entry.kind === "system_item" && entry.item.kind === "notification")
      line = `[Notification] ${indent(entry.item.body)}`;
    if (line !== undefined) lines.push(line);
  }
  return lines.join("\n");
}

/**
 * The size of a session slice for the extract threshold: its serialized entries (bookkeeping left
 * out) in bytes / 4. Not the pod's `estimateTokens`, which estimates a whole request's context
 * from usage records; this measures what was added to the log.
 */
export function estimateSliceTokens(entries: readonly Entry<Item>[]): number {
  let bytes = 0;
  for (const entry of entries) {
    if (entry.kind === "extension" || entry.kind === "llm_usage") continue;
    bytes += Buffer.byteLength(JSON.stringify(entry), "utf8");
  }
  return Math.ceil(bytes / 4);
}
