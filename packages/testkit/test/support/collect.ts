import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";

/** What a consumer of `doStream()` saw, folded into comparable values. */
export interface StreamSummary {
  parts: LanguageModelV3StreamPart[];
  text: string;
  reasoning: string;
  toolCalls: { toolCallId: string; toolName: string; input: string }[];
  /** `tool-input-delta` payloads per tool call id, to prove arguments arrived in pieces. */
  toolInputDeltas: Record<string, string[]>;
  textDeltas: string[];
  errors: unknown[];
  finish?: Extract<LanguageModelV3StreamPart, { type: "finish" }>;
  /** Set when reading the stream itself failed (connection torn down, abort). */
  streamError?: unknown;
}

/** Reads a `doStream()` stream to its end (or failure) and summarizes it. */
export async function collect(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<StreamSummary> {
  const summary: StreamSummary = {
    parts: [],
    text: "",
    reasoning: "",
    toolCalls: [],
    toolInputDeltas: {},
    textDeltas: [],
    errors: [],
  };
  try {
    for await (const part of stream) {
      summary.parts.push(part);
      switch (part.type) {
        case "text-delta":
          summary.text += part.delta;
          summary.textDeltas.push(part.delta);
          break;
        case "reasoning-delta":
          summary.reasoning += part.delta;
          break;
        case "tool-input-delta":
          summary.toolInputDeltas[part.id] = [...(summary.toolInputDeltas[part.id] ?? []), part.delta];
          break;
        case "tool-call":
          summary.toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case "error":
          summary.errors.push(part.error);
          break;
        case "finish":
          summary.finish = part;
          break;
      }
    }
  } catch (error) {
    summary.streamError = error;
  }
  return summary;
}

/** Provider metadata of all parts of one type, in order. */
export function metadataOf(summary: StreamSummary, type: LanguageModelV3StreamPart["type"]): unknown[] {
  return summary.parts
    .filter((part) => part.type === type && "providerMetadata" in part && part.providerMetadata !== undefined)
    .map((part) => (part as { providerMetadata?: unknown }).providerMetadata);
}
