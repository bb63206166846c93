import { z } from "zod";
import { MediaRefSchema } from "../media/media-ref.js";

/**
 * Opaque provider data needed to send an item back on the next request, keyed by provider
 * (`anthropic.signature`, `anthropic.redactedData`, `openai.itemId`/`reasoningEncryptedContent`,
 * `google.thoughtSignature`, …). Stored verbatim so a restored session replays byte-identically.
 */
export const ProviderMetadataSchema = z.record(z.string(), z.record(z.string(), z.unknown()));
export type ProviderMetadata = z.infer<typeof ProviderMetadataSchema>;

export const TextPartSchema = z.object({
  type: z.literal("text"),
  text: z.string(),
  provider_metadata: ProviderMetadataSchema.optional(),
});
export type TextPart = z.infer<typeof TextPartSchema>;

export const MessageItemSchema = z.object({
  type: z.literal("message"),
  role: z.enum(["user", "assistant", "system"]),
  content: z.array(TextPartSchema),
  /**
   * Media the message carries, by blob digest (docs/media.md): on a wire whose tool results take
   * none, the `system` message the worker commits after a batch's results carries their images,
   * and is sent as a user message. Never the model's own (assistant) messages.
   */
  media: z.array(MediaRefSchema).optional(),
});
export type MessageItem = z.infer<typeof MessageItemSchema>;

export const ToolCallItemSchema = z.object({
  type: z.literal("tool_call"),
  call_id: z.string(),
  name: z.string(),
  /** The arguments exactly as the model produced them (a JSON string). */
  arguments: z.string(),
  provider_metadata: ProviderMetadataSchema.optional(),
});
export type ToolCallItem = z.infer<typeof ToolCallItemSchema>;

export const ToolResultItemSchema = z.object({
  type: z.literal("tool_result"),
  call_id: z.string(),
  /** Always kept and always sent. */
  summary: z.string(),
  /** The full output; a request-local prune may drop it, history keeps it. */
  content: z.string().optional(),
  is_error: z.boolean().optional(),
  /** Images and documents the tool returned, by blob digest, never the bytes (docs/media.md). */
  media: z.array(MediaRefSchema).optional(),
});
export type ToolResultItem = z.infer<typeof ToolResultItemSchema>;

export const ReasoningItemSchema = z.object({
  type: z.literal("reasoning"),
  text: z.string(),
  provider_metadata: ProviderMetadataSchema.optional(),
});
export type ReasoningItem = z.infer<typeof ReasoningItemSchema>;

/**
 * A tool call the provider executed itself (Anthropic web search / code execution / MCP connector,
 * OpenAI Responses web search / MCP, Gemini code execution and server tools). Never executed
 * locally; kept in history and sent back verbatim so the model's next request sees it.
 */
export const ProviderToolCallItemSchema = z.object({
  type: z.literal("provider_tool_call"),
  call_id: z.string(),
  /** The tool name as the provider package reports it (`web_search`, `mcp.<tool>`, `code_execution`, …). */
  name: z.string(),
  /** The input as the provider reported it (a JSON string). */
  arguments: z.string(),
  provider_metadata: ProviderMetadataSchema.optional(),
});
export type ProviderToolCallItem = z.infer<typeof ProviderToolCallItemSchema>;

/** The result of a provider-executed tool call, exactly as the provider returned it. */
export const ProviderToolResultItemSchema = z.object({
  type: z.literal("provider_tool_result"),
  call_id: z.string(),
  name: z.string(),
  /** The provider's result (JSON), passed back untouched. */
  result: z.unknown(),
  is_error: z.boolean().optional(),
  provider_metadata: ProviderMetadataSchema.optional(),
});
export type ProviderToolResultItem = z.infer<typeof ProviderToolResultItemSchema>;

/**
 * An Anthropic compaction block: the provider's own summary of earlier context. Not part of the
 * answer text; sent back verbatim (its metadata marks it as a compaction block).
 */
export const CompactionItemSchema = z.object({
  type: z.literal("compaction"),
  text: z.string(),
  provider_metadata: ProviderMetadataSchema.optional(),
});
export type CompactionItem = z.infer<typeof CompactionItemSchema>;

/** One entry of a worker's history, tagged by `type`. */
export const ItemSchema = z.discriminatedUnion("type", [
  MessageItemSchema,
  ToolCallItemSchema,
  ToolResultItemSchema,
  ReasoningItemSchema,
  ProviderToolCallItemSchema,
  ProviderToolResultItemSchema,
  CompactionItemSchema,
]);
export type Item = z.infer<typeof ItemSchema>;

/** A message item with one text part. */
export function textMessage(role: MessageItem["role"], text: string): MessageItem {
  return { type: "message", role, content: [{ type: "text", text }] };
}

/** The concatenated text of a message item's parts. */
export function messageText(item: MessageItem): string {
  return item.content.map((part) => part.text).join("");
}

/** Tool calls in `items` that have no tool result after them, in call order. */
export function unansweredToolCalls(items: readonly Item[]): ToolCallItem[] {
  const answered = new Set<string>();
  for (const item of items) if (item.type === "tool_result") answered.add(item.call_id);
  return items.filter(
    (item): item is ToolCallItem => item.type === "tool_call" && !answered.has(item.call_id),
  );
}
