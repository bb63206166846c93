import type {
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from "@ai-sdk/provider";
import type { ProviderMetadata, ReasoningItem, TextPart, ToolCallItem } from "../items/item.js";

/** What one streamed response produced, and whether the stream broke. */
export interface CollectedResponse {
  /** Reasoning blocks whose end was seen, in stream order. */
  reasoning: ReasoningItem[];
  /** Text blocks in stream order; a block cut off by a break keeps what arrived. */
  text: TextPart[];
  /** Tool calls whose final `tool-call` part arrived. */
  toolCalls: ToolCallItem[];
  /** A tool call had started streaming but never completed. */
  partialToolCall: boolean;
  /** Some content (text, reasoning or tool input) arrived. */
  began: boolean;
  usage: LanguageModelV3Usage | undefined;
  finishReason: LanguageModelV3FinishReason | undefined;
  warnings: string[];
  /** Set when the stream broke (an error part or a failed read). */
  error: unknown;
}

/** Callbacks for live display while a response streams. */
export interface StreamObserver {
  onFirstContent(): void;
  onPart(): void;
  onTextDelta(delta: string): void;
  onReasoningDelta(delta: string): void;
}

interface OpenBlock {
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
function openBlock(
  blocks: Map<string, OpenBlock>,
  id: string,
  metadata: SharedV3ProviderMetadata | undefined,
): void {
  blocks.set(id, { text: "", metadata: mergeMetadata(undefined, metadata), ended: false });
}

function appendToBlock(
  blocks: Map<string, OpenBlock>,
  id: string,
  delta: string,
  metadata: SharedV3ProviderMetadata | undefined,
): void {
  let block = blocks.get(id);
  if (!block) {
    block = { text: "", metadata: undefined, ended: false };
    blocks.set(id, block);
  }
  block.text += delta;
  block.metadata = mergeMetadata(block.metadata, metadata);
}

function endBlock(
  blocks: Map<string, OpenBlock>,
  id: string,
  metadata: SharedV3ProviderMetadata | undefined,
): void {
  const block = blocks.get(id);
  if (block) {
    block.metadata = mergeMetadata(block.metadata, metadata);
    block.ended = true;
  }
}

/** A response that received nothing yet; with `error`, one that failed before its stream opened. */
export function emptyResponse(error?: unknown): CollectedResponse {
  return {
    reasoning: [],
    text: [],
    toolCalls: [],
    partialToolCall: false,
    began: false,
    usage: undefined,
    finishReason: undefined,
    warnings: [],
    error,
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
  const texts = new Map<string, OpenBlock>();
  const reasonings = new Map<string, OpenBlock>();
  const openToolInputs = new Set<string>();
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      observer.onPart();
      if (!result.began && isContentPart(part)) {
        result.began = true;
        observer.onFirstContent();
      }
      switch (part.type) {
        case "text-start":
          openBlock(texts, part.id, part.providerMetadata);
          break;
        case "text-delta":
          appendToBlock(texts, part.id, part.delta, part.providerMetadata);
          if (part.delta !== "") observer.onTextDelta(part.delta);
          break;
        case "text-end":
          endBlock(texts, part.id, part.providerMetadata);
          break;
        case "reasoning-start":
          openBlock(reasonings, part.id, part.providerMetadata);
          break;
        case "reasoning-delta":
          appendToBlock(reasonings, part.id, part.delta, part.providerMetadata);
          if (part.delta !== "") observer.onReasoningDelta(part.delta);
          break;
        case "reasoning-end":
          endBlock(reasonings, part.id, part.providerMetadata);
          break;
        case "tool-input-start":
          openToolInputs.add(part.id);
          break;
        case "tool-call": {
          openToolInputs.delete(part.toolCallId);
          if (part.providerExecuted) break;
          const call: ToolCallItem = {
            type: "tool_call",
            call_id: part.toolCallId,
            name: part.toolName,
            arguments: part.input,
          };
          if (part.providerMetadata) call.provider_metadata = mergeMetadata(undefined, part.providerMetadata);
          result.toolCalls.push(call);
          break;
        }
        case "finish":
          result.usage = part.usage;
          result.finishReason = part.finishReason;
          break;
        case "stream-start":
          for (const warning of part.warnings) result.warnings.push(describeWarning(warning));
          break;
        case "error":
          result.error = part.error;
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
  for (const block of reasonings.values()) {
    // A reasoning block cut off before its end lacks its signature and cannot be sent back.
    if (!block.ended && result.error !== undefined) continue;
    const item: ReasoningItem = { type: "reasoning", text: block.text };
    if (block.metadata) item.provider_metadata = block.metadata;
    result.reasoning.push(item);
  }
  for (const block of texts.values()) {
    if (block.text === "") continue;
    const part: TextPart = { type: "text", text: block.text };
    if (block.metadata) part.provider_metadata = block.metadata;
    result.text.push(part);
  }
  result.partialToolCall = openToolInputs.size > 0;
  return result;
}

function describeWarning(warning: unknown): string {
  if (typeof warning !== "object" || warning === null) return String(warning);
  const w = warning as Record<string, unknown>;
  return [w.type, w.feature ?? w.setting, w.details ?? w.message].filter((v) => v !== undefined).join(": ");
}
