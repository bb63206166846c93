import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { ModelAdapter } from "../adapters/model-adapter.js";
import type {
  CompactionItem,
  Item,
  ProviderMetadata,
  ProviderToolCallItem,
  ProviderToolResultItem,
  ToolResultItem,
} from "../items/item.js";
import { mediaCapabilities } from "../media/capabilities.js";
import { type ItemMedia, type MediaBytes, planRequestMedia, type SentMedia } from "../media/request-media.js";

type AssistantPart = Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number];
type ToolPart = Extract<LanguageModelV3Message, { role: "tool" }>["content"][number];
type UserPart = Extract<LanguageModelV3Message, { role: "user" }>["content"][number];
type ToolContentPart = Extract<LanguageModelV3ToolResultOutput, { type: "content" }>["value"][number];

/** Where cache-control breakpoints go: after the system prompt and/or after given item indices. */
export interface CacheBreakpoints {
  systemPrompt: boolean;
  items: ReadonlySet<number>;
}

const NO_BREAKPOINTS: CacheBreakpoints = { systemPrompt: false, items: new Set() };
const EPHEMERAL = { type: "ephemeral" } as const;

function withCacheControl(
  options: SharedV3ProviderOptions | undefined,
  key: string,
): SharedV3ProviderOptions {
  return { ...options, [key]: { ...options?.[key], cacheControl: EPHEMERAL } };
}

/** The text the model sees for a tool result: the summary, then the content when present. */
export function toolResultText(item: ToolResultItem): string {
  return item.content === undefined || item.content === ""
    ? item.summary
    : `${item.summary}\n\n${item.content}`;
}

/** `text` with the notes of the media not sent in place, one per line. */
function withNotes(text: string, media: ItemMedia | undefined): string {
  return media === undefined || media.notes.length === 0 ? text : `${text}\n${media.notes.join("\n")}`;
}

/** A media part inside a tool result: base64, as the tool-result content types of the V3 spec take it. */
function toolResultMediaPart({ ref, data }: SentMedia): ToolContentPart {
  const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
  return ref.media_type.startsWith("image/")
    ? { type: "image-data", data: base64, mediaType: ref.media_type }
    : {
        type: "file-data",
        data: base64,
        mediaType: ref.media_type,
        ...(ref.name === undefined ? {} : { filename: ref.name }),
      };
}

/**
 * A tool result as text, or — when it sends media (docs/media.md) — as content: its text, then an
 * image or document part each, which the Anthropic, OpenAI Responses and Gemini adapters turn into
 * image blocks. (`content` drops the error flag on Anthropic's wire; an error rarely carries media.)
 */
function toolResultOutput(
  item: ToolResultItem,
  media: ItemMedia | undefined,
): LanguageModelV3ToolResultOutput {
  const value = withNotes(toolResultText(item), media);
  if (media !== undefined && media.sent.length > 0) {
    return {
      type: "content",
      value: [{ type: "text", text: value }, ...media.sent.map(toolResultMediaPart)],
    };
  }
  return item.is_error ? { type: "error-text", value } : { type: "text", value };
}

/** A message's media as user-message file parts (bytes; each adapter encodes them for its wire). */
function userMediaPart({ ref, data }: SentMedia): UserPart {
  return {
    type: "file",
    data,
    mediaType: ref.media_type,
    ...(ref.name === undefined ? {} : { filename: ref.name }),
  };
}

function parseArguments(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    // The model produced invalid JSON; the tool result already told it so. Send an empty
    // object because every wire requires an object here.
    return {};
  }
}

/**
 * Gemini's legacy code execution parts (`executableCode` / `codeExecutionResult`) have no
 * prompt form in @ai-sdk/google 3.x: it would send them back as a client `functionCall` with no
 * response, which Gemini rejects. They stay in history and are left out of requests; Gemini's
 * server tool parts (`toolCall` / `toolResponse`, marked by `serverToolCallId`) go back verbatim.
 */
function omittedFromRequest(
  item: ProviderToolCallItem | ProviderToolResultItem,
  adapter: ModelAdapter,
): boolean {
  if (adapter.providerOptionsKey !== "google") return false;
  return item.provider_metadata?.google?.serverToolCallId === undefined;
}

function asOptions(metadata: ProviderMetadata | undefined): SharedV3ProviderOptions | undefined {
  return metadata as SharedV3ProviderOptions | undefined;
}

/**
 * The assistant-side part of a provider-executed call, its result or a compaction block, in the
 * shape the AI SDK's own `streamText` sends them back: the call with `providerExecuted`, the
 * result as JSON output inside the assistant message, compaction as text tagged by its metadata.
 */
function providerPart(item: ProviderToolCallItem | ProviderToolResultItem | CompactionItem): AssistantPart {
  switch (item.type) {
    case "provider_tool_call":
      return {
        type: "tool-call",
        toolCallId: item.call_id,
        toolName: item.name,
        input: parseArguments(item.arguments),
        providerExecuted: true,
      };
    case "provider_tool_result":
      return {
        type: "tool-result",
        toolCallId: item.call_id,
        toolName: item.name,
        output: {
          type: item.is_error ? "error-json" : "json",
          value: (item.result ?? null) as never,
        },
      };
    case "compaction":
      return { type: "text", text: item.text };
  }
}

/**
 * Maps the system prompt and history items to a LanguageModelV3 prompt. Consecutive
 * assistant-side items (reasoning, assistant text, tool calls) form one assistant message and
 * consecutive tool results one tool message, as every wire expects; provider metadata goes
 * back as `providerOptions`. History system items keep the system role only where the wire
 * has one mid-conversation, otherwise they become user-role text. Media (docs/media.md) go where
 * the wire takes them, with the bytes of `media`: inside tool results, or in the user message a
 * `system` item carrying them becomes; every part not sent is a note in its text.
 */
export function toV3Prompt(
  systemPrompt: string | undefined,
  items: readonly Item[],
  adapter: ModelAdapter,
  breakpoints: CacheBreakpoints = NO_BREAKPOINTS,
  media: MediaBytes = new Map(),
): LanguageModelV3Prompt {
  const key = adapter.providerOptionsKey;
  const mediaPlan = planRequestMedia(items, mediaCapabilities(adapter), media);
  const prompt: LanguageModelV3Prompt = [];
  if (systemPrompt !== undefined && systemPrompt !== "") {
    prompt.push(
      breakpoints.systemPrompt
        ? { role: "system", content: systemPrompt, providerOptions: withCacheControl(undefined, key) }
        : { role: "system", content: systemPrompt },
    );
  }
  const toolNames = new Map<string, string>();
  let assistant: AssistantPart[] | undefined;
  let tool: ToolPart[] | undefined;
  const flush = (): void => {
    if (assistant) prompt.push({ role: "assistant", content: assistant });
    if (tool) prompt.push({ role: "tool", content: tool });
    assistant = undefined;
    tool = undefined;
  };
  items.forEach((item, index) => {
    const cache = breakpoints.items.has(index);
    switch (item.type) {
      case "message": {
        if (item.role === "assistant") {
          if (tool) flush();
          assistant ??= [];
          item.content.forEach((part, partIndex) => {
            const last = partIndex === item.content.length - 1;
            const options = asOptions(part.provider_metadata);
            assistant?.push({
              type: "text",
              text: part.text,
              ...(cache && last
                ? { providerOptions: withCacheControl(options, key) }
                : options
                  ? { providerOptions: options }
                  : {}),
            });
          });
          return;
        }
        flush();
        const text = item.content.map((part) => part.text).join("");
        const itemMedia = mediaPlan.get(index);
        if (itemMedia !== undefined) {
          // A message carrying media goes in the user role, the one that takes files on every wire.
          const parts: UserPart[] = [
            { type: "text", text: withNotes(text, itemMedia) },
            ...itemMedia.sent.map(userMediaPart),
          ];
          const last = parts.length - 1;
          if (cache)
            parts[last] = { ...(parts[last] as UserPart), providerOptions: withCacheControl(undefined, key) };
          const previous = prompt.at(-1);
          if (previous?.role === "user") previous.content.push(...parts);
          else prompt.push({ role: "user", content: parts });
          return;
        }
        if (item.role === "system" && adapter.midHistorySystemRole) {
          prompt.push(
            cache
              ? { role: "system", content: text, providerOptions: withCacheControl(undefined, key) }
              : { role: "system", content: text },
          );
        } else {
          const part = cache
            ? { type: "text" as const, text, providerOptions: withCacheControl(undefined, key) }
            : { type: "text" as const, text };
          // Consecutive user-role items form one user turn (Gemini does not merge them itself).
          const previous = prompt.at(-1);
          if (previous?.role === "user") previous.content.push(part);
          else prompt.push({ role: "user", content: [part] });
        }
        return;
      }
      case "reasoning": {
        if (tool) flush();
        assistant ??= [];
        const options = asOptions(item.provider_metadata);
        // Thinking blocks cannot carry cache control; the breakpoint planner never picks them.
        assistant.push({
          type: "reasoning",
          text: item.text,
          ...(options ? { providerOptions: options } : {}),
        });
        return;
      }
      case "tool_call": {
        if (tool) flush();
        assistant ??= [];
        toolNames.set(item.call_id, item.name);
        const options = asOptions(item.provider_metadata);
        assistant.push({
          type: "tool-call",
          toolCallId: item.call_id,
          toolName: item.name,
          input: parseArguments(item.arguments),
          ...(cache
            ? { providerOptions: withCacheControl(options, key) }
            : options
              ? { providerOptions: options }
              : {}),
        });
        return;
      }
      case "provider_tool_call":
      case "provider_tool_result":
      case "compaction": {
        if (item.type !== "compaction" && omittedFromRequest(item, adapter)) return;
        if (tool) flush();
        assistant ??= [];
        const options = asOptions(item.provider_metadata);
        const providerOptions = cache ? withCacheControl(options, key) : options;
        assistant.push({
          ...providerPart(item),
          ...(providerOptions ? { providerOptions } : {}),
        } as AssistantPart);
        return;
      }
      case "tool_result": {
        if (assistant) {
          prompt.push({ role: "assistant", content: assistant });
          assistant = undefined;
        }
        tool ??= [];
        tool.push({
          type: "tool-result",
          toolCallId: item.call_id,
          toolName: toolNames.get(item.call_id) ?? "unknown",
          output: toolResultOutput(item, mediaPlan.get(index)),
          ...(cache ? { providerOptions: withCacheControl(undefined, key) } : {}),
        });
        return;
      }
    }
  });
  flush();
  return prompt;
}
