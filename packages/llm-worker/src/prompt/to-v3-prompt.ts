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

type AssistantPart = Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number];
type ToolPart = Extract<LanguageModelV3Message, { role: "tool" }>["content"][number];

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

function toolResultOutput(item: ToolResultItem): LanguageModelV3ToolResultOutput {
  const value = toolResultText(item);
  return item.is_error ? { type: "error-text", value } : { type: "text", value };
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
 * has one mid-conversation, otherwise they become user-role text.
 */
export function toV3Prompt(
  systemPrompt: string | undefined,
  items: readonly Item[],
  adapter: ModelAdapter,
  breakpoints: CacheBreakpoints = NO_BREAKPOINTS,
): LanguageModelV3Prompt {
  const key = adapter.providerOptionsKey;
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
          output: toolResultOutput(item),
          ...(cache ? { providerOptions: withCacheControl(undefined, key) } : {}),
        });
        return;
      }
    }
  });
  flush();
  return prompt;
}
