import { ScriptError } from "../errors.js";
import type { ScriptedFinishReason, ScriptedPart, ScriptedResponse, ScriptedUsage } from "../types.js";

/** A scripted (parts-based) response, the shape every wire renderer consumes. */
export type PartsResponse = Extract<ScriptedResponse, { parts: ScriptedPart[] }>;

/** What a renderer needs besides the script: deterministic ids and the double's clock. */
export interface RenderContext {
  /** Returns `<prefix><n>` with a counter private to one double, so ids are stable across runs. */
  nextId(prefix: string): string;
  now(): number;
  /** The model id the client asked for, echoed back like a provider does. */
  model: string;
}

/** Creates the id source of one double; separate doubles never share counters. */
export function createIdSource(): (prefix: string) => string {
  let counter = 0;
  return (prefix) => {
    counter += 1;
    return `${prefix}${String(counter).padStart(4, "0")}`;
  };
}

/** Splits `text` into pieces of `chunkSize` characters (one piece when unset); never returns an empty list. */
export function splitIntoChunks(text: string, chunkSize: number | undefined, where: string): string[] {
  if (chunkSize === undefined || text.length === 0) return [text];
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new ScriptError(`${where}: chunkSize must be a positive integer, got ${String(chunkSize)}`);
  }
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += chunkSize)
    pieces.push(text.slice(start, start + chunkSize));
  return pieces;
}

/** The JSON text of a tool call's arguments, as the provider would stream it. */
export function toolArgumentsJson(part: Extract<ScriptedPart, { type: "tool_call" }>): string {
  return typeof part.arguments === "string" ? part.arguments : JSON.stringify(part.arguments);
}

/** Usage with every optional count resolved, and the output split into reasoning and visible text. */
export interface ResolvedUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Prompt tokens that were neither read from nor written to the cache. */
  uncachedInputTokens: number;
}

/**
 * Fills in usage defaults. Without scripted usage the double reports a small plausible count derived from
 * the output length, so clients that require usage still get numbers.
 */
export function resolveUsage(response: PartsResponse): ResolvedUsage {
  const usage: ScriptedUsage = response.usage ?? {
    inputTokens: 10,
    outputTokens: defaultOutputTokens(response),
  };
  const cacheReadTokens = usage.cacheReadTokens ?? 0;
  const cacheWriteTokens = usage.cacheWriteTokens ?? 0;
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    reasoningTokens: usage.reasoningTokens ?? 0,
    uncachedInputTokens: Math.max(0, usage.inputTokens - cacheReadTokens - cacheWriteTokens),
  };
}

/** Output tokens of a response scripted without usage: its output characters / 4. */
export function defaultOutputTokens(response: PartsResponse): number {
  return Math.max(1, Math.ceil(outputLength(response) / 4));
}

function outputLength(response: PartsResponse): number {
  let length = 0;
  for (const part of response.parts) {
    if (part.type === "text" || part.type === "reasoning" || part.type === "compaction")
      length += part.text.length;
    else if (part.type === "tool_call") length += toolArgumentsJson(part).length;
  }
  return length;
}

/** The finish reason: scripted, else `tool_calls` when the turn calls a tool, else `stop`. */
export function resolveFinishReason(response: PartsResponse): ScriptedFinishReason {
  if (response.finishReason) return response.finishReason;
  return response.parts.some((part) => part.type === "tool_call") ? "tool_calls" : "stop";
}

/** JSON-encodes one event payload. */
export function data(payload: unknown): string {
  return JSON.stringify(payload);
}

/** Fails validation for a part or finish reason the wire has no form for. */
export function unsupported(wire: string, what: string, index?: number): never {
  const where = index === undefined ? `${wire} script` : `${wire} script part ${index}`;
  throw new ScriptError(`${where}: ${what} does not exist on the ${wire} wire; script it for another wire`);
}

/** The id a server tool result refers to: its own, else the last server tool call's. */
export function resultCallId(
  part: Extract<ScriptedPart, { type: "server_tool_result" }>,
  lastCallId: string | undefined,
  where: string,
): string {
  const id = part.toolCallId ?? lastCallId;
  if (id === undefined) {
    throw new ScriptError(
      `${where}: a server_tool_result needs a toolCallId or a server_tool_call before it`,
    );
  }
  return id;
}

/** The `data:` text of a raw part. */
export function rawData(part: Extract<ScriptedPart, { type: "raw" }>): string {
  return typeof part.data === "string" ? part.data : JSON.stringify(part.data);
}
