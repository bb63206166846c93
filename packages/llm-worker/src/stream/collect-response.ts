import type {
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from "@ai-sdk/provider";
import type {
  CompactionItem,
  Item,
  MessageItem,
  ProviderMetadata,
  ReasoningItem,
  TextPart,
  ToolCallItem,
} from "../items/item.js";

/** What one streamed response produced, and whether the stream broke. */
export interface CollectedResponse {
  /**
   * Everything but client tool calls, in stream order: reasoning whose end was seen, assistant
   * messages (consecutive text blocks form one; a block cut off by a break keeps what arrived),
   * provider-executed tool calls and results, compaction blocks.
   */
  items: Item[];
  /** The visible answer text of this response (compaction blocks excluded). */
  text: string;
  /** Client tool calls whose final `tool-call` part arrived. */
  toolCalls: ToolCallItem[];
  /** Tool calls that had started streaming but never completed (dropped), by id and name. */
  partialToolCalls: { id: string; name: string }[];
  /** Some content (text, reasoning or tool input) arrived. */
  began: boolean;
  usage: LanguageModelV3Usage | undefined;
  finishReason: LanguageModelV3FinishReason | undefined;
  /** Provider metadata of the finish part (e.g. Anthropic's code-execution `container`). */
  finishMetadata: SharedV3ProviderMetadata | undefined;
  /** The model and response id the provider reported (its `response-metadata` part), if any. */
  responseModel: string | undefined;
  responseId: string | undefined;
  warnings: string[];
  /** Set when the stream broke (an error part or a failed read). */
  error: unknown;
  /** The type of the last stream part read, to say where a parser crash happened. */
  lastPartType: string | undefined;
}

/** Callbacks for live display while a response streams. */
export interface StreamObserver {
  onFirstContent(): void;
  onPart(): void;
  onTextDelta(delta: string): void;
  onReasoningDelta(delta: string): void;
  /** A client tool call's argument text as it streams (its JSON, chunk by chunk). */
  onToolInputDelta(callId: string, name: string, delta: string): void;
}

interface OpenBlock {
  kind: "text" | "reasoning" | "compaction";
  text: string;
  metadata: ProviderMetadata | undefined;
  ended: boolean;
}

/** Merges provider metadata of the parts of one block (start, deltas, end) per provider key. */
function mergeMetadata(
  into: ProviderMetadata | undefined,
  from: SharedV3ProviderMetadata | undefined,
): ProviderMetadata | undefined {
  if (from === undefined) return into;
  const merged: ProviderMetadata = { ...into };
  for (const [provider, values] of Object.entries(from)) {
    merged[provider] = { ...merged[provider], ...(values as Record<string, unknown>) };
  }
  return merged;
}

function isContentPart(part: LanguageModelV3StreamPart): boolean {
  switch (part.type) {
    case "text-start":
    case "text-delta":
    case "reasoning-start":
    case "reasoning-delta":
    case "tool-input-start":
    case "tool-input-delta":
    case "tool-call":
      return true;
    default:
      return false;
  }
}

// Text and reasoning blocks stream the same way: start, deltas, end, each possibly carrying metadata.
// Blocks and provider items are kept in one list in stream order so they go back in that order.
type Entry = { block: OpenBlock } | { item: Item };

class Blocks {
  readonly entries: Entry[] = [];
  private readonly open = new Map<string, OpenBlock>();

  start(kind: OpenBlock["kind"], id: string, metadata: SharedV3ProviderMetadata | undefined): OpenBlock {
    const block: OpenBlock = { kind, text: "", metadata: mergeMetadata(undefined, metadata), ended: false };
    this.open.set(`${kind === "reasoning" ? "r" : "t"}:${id}`, block);
    this.entries.push({ block });
    return block;
  }

  get(kind: "text" | "reasoning", id: string): OpenBlock {
    return this.open.get(`${kind === "reasoning" ? "r" : "t"}:${id}`) ?? this.start(kind, id, undefined);
  }
}

function appendToBlock(
  block: OpenBlock,
  delta: string,
  metadata: SharedV3ProviderMetadata | undefined,
): void {
  block.text += delta;
  block.metadata = mergeMetadata(block.metadata, metadata);
}

function endBlock(block: OpenBlock, metadata: SharedV3ProviderMetadata | undefined): void {
  block.metadata = mergeMetadata(block.metadata, metadata);
  block.ended = true;
}

/** Anthropic marks a compaction block as a text block whose metadata says `type: "compaction"`. */
function isCompaction(metadata: SharedV3ProviderMetadata | undefined): boolean {
  return (metadata?.anthropic as { type?: unknown } | undefined)?.type === "compaction";
}

/** A response that received nothing yet; with `error`, one that failed before its stream opened. */
export function emptyResponse(error?: unknown): CollectedResponse {
  return {
    items: [],
    text: "",
    toolCalls: [],
    partialToolCalls: [],
    began: false,
    usage: undefined,
    finishReason: undefined,
    finishMetadata: undefined,
    responseModel: undefined,
    responseId: undefined,
    warnings: [],
    error,
    lastPartType: undefined,
  };
}

/**
 * Reads one response stream to its end or its first error and sorts what arrived into items.
 * It never throws: a broken stream comes back with `error` set and everything received so far,
 * so the caller decides between retry, continuation and failure.
 */
export async function collectResponse(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  observer: StreamObserver,
): Promise<CollectedResponse> {
  const result = emptyResponse();
  const blocks = new Blocks();
  const openToolInputs = new Map<string, string>();
  const providerInputs = new Set<string>();
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      result.lastPartType = part.type;
      observer.onPart();
      if (!result.began && isContentPart(part)) {
        result.began = true;
        observer.onFirstContent();
      }
      switch (part.type) {
        case "text-start":
          blocks.start(
            isCompaction(part.providerMetadata) ? "compaction" : "text",
            part.id,
            part.providerMetadata,
          );
          break;
        case "text-delta": {
          const block = blocks.get("text", part.id);
          appendToBlock(block, part.delta, part.providerMetadata);
          // Compaction text is the provider's summary of old context, never part of the answer.
          if (part.delta !== "" && block.kind === "text") observer.onTextDelta(part.delta);
          break;
        }
        case "text-end":
          endBlock(blocks.get("text", part.id), part.providerMetadata);
          break;
        case "reasoning-start":
          blocks.start("reasoning", part.id, part.providerMetadata);
          break;
        case "reasoning-delta":
          appendToBlock(blocks.get("reasoning", part.id), part.delta, part.providerMetadata);
          if (part.delta !== "") observer.onReasoningDelta(part.delta);
          break;
        case "reasoning-end":
          endBlock(blocks.get("reasoning", part.id), part.providerMetadata);
          break;
        case "tool-input-start":
          openToolInputs.set(part.id, part.toolName);
          if (part.providerExecuted === true) providerInputs.add(part.id);
          break;
        case "tool-input-delta": {
          // Client calls only: what a provider-executed call is given is the provider's business.
          const name = openToolInputs.get(part.id);
          if (name !== undefined && part.delta !== "" && !providerInputs.has(part.id))
            observer.onToolInputDelta(part.id, name, part.delta);
          break;
        }
        case "tool-call": {
          openToolInputs.delete(part.toolCallId);
          const metadata = mergeMetadata(undefined, part.providerMetadata);
          if (part.providerExecuted) {
            blocks.entries.push({
              item: {
                type: "provider_tool_call",
                call_id: part.toolCallId,
                name: part.toolName,
                arguments: part.input,
                ...(metadata ? { provider_metadata: metadata } : {}),
              },
            });
            break;
          }
          const call: ToolCallItem = {
            type: "tool_call",
            call_id: part.toolCallId,
            name: part.toolName,
            arguments: part.input,
          };
          if (metadata) call.provider_metadata = metadata;
          result.toolCalls.push(call);
          break;
        }
        case "tool-result": {
          // Preliminary results are replaced by a final one; only that one is history.
          if (part.preliminary) break;
          const metadata = mergeMetadata(undefined, part.providerMetadata);
          blocks.entries.push({
            item: {
              type: "provider_tool_result",
              call_id: part.toolCallId,
              name: part.toolName,
              result: part.result,
              ...(part.isError ? { is_error: true } : {}),
              ...(metadata ? { provider_metadata: metadata } : {}),
            },
          });
          break;
        }
        case "finish":
          result.usage = part.usage;
          result.finishReason = part.finishReason;
          result.finishMetadata = part.providerMetadata;
          break;
        case "response-metadata":
          result.responseModel = part.modelId ?? result.responseModel;
          result.responseId = part.id ?? result.responseId;
          break;
        case "stream-start":
          for (const warning of part.warnings) result.warnings.push(describeWarning(warning));
          break;
        case "error":
          result.error = part.error ?? new Error("the provider sent an error event without details");
          break;
        default:
          break;
      }
      if (result.error !== undefined) break;
    }
  } catch (error) {
    result.error = error ?? new Error("the response stream failed");
  } finally {
    if (result.error !== undefined) reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  sortOutput(blocks.entries, result);
  result.partialToolCalls = [...openToolInputs].map(([id, name]) => ({ id, name }));
  return result;
}

/** Turns the entries into items: consecutive text blocks form one assistant message. */
function sortOutput(entries: readonly Entry[], result: CollectedResponse): void {
  let message: MessageItem | undefined;
  for (const entry of entries) {
    if ("item" in entry) {
      message = undefined;
      result.items.push(entry.item);
      continue;
    }
    const { block } = entry;
    if (block.kind === "text") {
      if (block.text === "") continue;
      const part: TextPart = { type: "text", text: block.text };
      if (block.metadata) part.provider_metadata = block.metadata;
      if (message === undefined) {
        message = { type: "message", role: "assistant", content: [] };
        result.items.push(message);
      }
      message.content.push(part);
      result.text += block.text;
      continue;
    }
    message = undefined;
    // A reasoning or compaction block cut off before its end lacks its signature and cannot be sent back.
    if (!block.ended && result.error !== undefined) continue;
    if (block.kind === "compaction") {
      const item: CompactionItem = { type: "compaction", text: block.text };
      if (block.metadata) item.provider_metadata = block.metadata;
      result.items.push(item);
    } else {
      const item: ReasoningItem = { type: "reasoning", text: block.text };
      if (block.metadata) item.provider_metadata = block.metadata;
      result.items.push(item);
    }
  }
}

function describeWarning(warning: unknown): string {
  if (typeof warning !== "object" || warning === null) return String(warning);
  const w = warning as Record<string, unknown>;
  return [w.type, w.feature ?? w.setting, w.details ?? w.message].filter((v) => v !== undefined).join(": ");
}
