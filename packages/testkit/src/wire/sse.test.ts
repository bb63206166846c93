import { describe, expect, it } from "vitest";
import { formatSseEvent, framesForRecordedChunks, malformedFrame } from "./sse.js";

describe("SSE framing", () => {
  it("names Anthropic and OpenAI Responses events after the payload type", () => {
    const anthropic = framesForRecordedChunks("anthropic", ['{"type":"message_stop"}']);
    const responses = framesForRecordedChunks("openai-responses", [
      '{"type":"response.completed","response":{}}',
    ]);
    expect(anthropic.map(formatSseEvent)).toEqual(['event: message_stop\ndata: {"type":"message_stop"}\n\n']);
    expect(responses[0]?.event).toBe("response.completed");
  });

  it("sends OpenAI Chat and Gemini payloads as bare data lines", () => {
    expect(framesForRecordedChunks("google", ['{"candidates":[]}']).map(formatSseEvent)).toEqual([
      'data: {"candidates":[]}\n\n',
    ]);
  });

  it("ends an OpenAI Chat replay with [DONE] exactly once", () => {
    expect(framesForRecordedChunks("openai-chat", ['{"choices":[]}']).map((event) => event.data)).toEqual([
      '{"choices":[]}',
      "[DONE]",
    ]);
    expect(
      framesForRecordedChunks("openai-chat", ['{"choices":[]}', "[DONE]"]).map((event) => event.data),
    ).toEqual(['{"choices":[]}', "[DONE]"]);
  });

  it("replays a line that is not JSON verbatim, without an event name", () => {
    expect(framesForRecordedChunks("anthropic", ["{not json"])).toEqual([{ data: "{not json" }]);
  });

  it("splits a payload with line breaks into several data lines", () => {
    expect(formatSseEvent({ data: "a\nb" })).toBe("data: a\ndata: b\n\n");
  });

  it("cuts the malformed frame off mid-JSON", () => {
    expect(() => JSON.parse(malformedFrame("openai-chat").data)).toThrow();
    expect(malformedFrame("anthropic").event).toBe("content_block_delta");
  });
});
