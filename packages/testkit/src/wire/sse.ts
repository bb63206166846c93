import type { SseEvent, Wire } from "../types.js";

/** Serializes one event as it goes on the wire; a payload with line breaks becomes several `data:` lines. */
export function formatSseEvent(event: SseEvent): string {
  const head = event.event !== undefined ? `event: ${event.event}\n` : "";
  const body = event.data
    .split("\n")
    .map((line) => `data: ${line}`)
    .join("\n");
  return `${head}${body}\n\n`;
}

/** Whether this wire names every event (`event:` line) after the payload's `type`. */
function namesEvents(wire: Wire): boolean {
  return wire === "anthropic" || wire === "openai-responses";
}

/**
 * Frames raw recorded payloads (one JSON text per entry) the way the provider sent them: Anthropic and
 * OpenAI Responses add `event: <type>`, OpenAI Chat ends with `data: [DONE]` (added unless recorded).
 */
export function framesForRecordedChunks(wire: Wire, chunks: readonly string[]): SseEvent[] {
  const events: SseEvent[] = chunks.map((payload) => {
    const name = namesEvents(wire) ? eventType(payload) : undefined;
    return name !== undefined ? { event: name, data: payload } : { data: payload };
  });
  if (wire === "openai-chat" && chunks.at(-1)?.trim() !== "[DONE]") events.push({ data: "[DONE]" });
  return events;
}

function eventType(payload: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(payload);
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      "type" in parsed &&
      typeof parsed.type === "string"
    ) {
      return parsed.type;
    }
  } catch {
    // A recording with a broken line is replayed as-is, without an event name.
  }
  return undefined;
}

/** A frame whose payload is cut off mid-JSON, as a truncated or corrupted proxy would deliver it. */
export function malformedFrame(wire: Wire): SseEvent {
  const name =
    wire === "anthropic"
      ? "content_block_delta"
      : wire === "openai-responses"
        ? "response.output_text.delta"
        : undefined;
  const data = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut off';
  return name !== undefined ? { event: name, data } : { data };
}
