import { readdirSync } from "node:fs";
import path from "node:path";
import { APICallError, type LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { loadRecordedChunks, RECORDINGS_DIR, type Wire } from "../src/index.js";
import { collect, metadataOf, type StreamSummary } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { allWires, basicCall, modelFor } from "./support/models.js";

const recordingsDir = RECORDINGS_DIR;
const startDouble = useDoubles();

interface Expectation {
  /** Call options when the recording needs particular tools declared. */
  call?: LanguageModelV3CallOptions;
  check(summary: StreamSummary): void;
  /** For recordings that are an error the client must throw from doStream(). */
  rejects?: (error: unknown) => void;
}

const weatherTools: LanguageModelV3CallOptions = basicCall({
  tools: [
    {
      type: "function",
      name: "weather",
      inputSchema: { type: "object", properties: { location: { type: "string" } } },
    },
    {
      type: "function",
      name: "cityAttractions",
      inputSchema: { type: "object", properties: { city: { type: "string" } } },
    },
  ],
});

function finishOf(summary: StreamSummary) {
  expect(summary.finish).toBeDefined();
  return summary.finish as NonNullable<StreamSummary["finish"]>;
}

function textOfLength(summary: StreamSummary, start: string, length: number) {
  expect(summary.text.startsWith(start)).toBe(true);
  expect(summary.text).toHaveLength(length);
}

/** What each recording must come out as; every file in the folder needs an entry. */
const expectations: Record<Wire, Record<string, Expectation>> = {
  anthropic: {
    "anthropic-json-tool.1.chunks.txt": {
      check(summary) {
        expect(summary.toolCalls).toHaveLength(1);
        expect(summary.toolCalls[0]?.toolName).toBe("json");
        expect(JSON.parse(summary.toolCalls[0]?.input ?? "")).toEqual({
          elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }],
        });
        expect(finishOf(summary).finishReason.unified).toBe("tool-calls");
        expect(finishOf(summary).usage.inputTokens.total).toBe(849);
        expect(finishOf(summary).usage.outputTokens.total).toBe(47);
      },
    },
    "anthropic-message-delta-input-tokens.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe("pong");
        // The input count arrives (corrected) in message_delta, not message_start.
        expect(finishOf(summary).usage.inputTokens.total).toBe(61);
        expect(finishOf(summary).usage.outputTokens.total).toBe(2);
      },
    },
    "anthropic-refusal.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe("");
        expect(finishOf(summary).finishReason).toEqual({ unified: "content-filter", raw: "refusal" });
      },
    },
    "anthropic-text.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe(
          "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
        );
        expect(summary.textDeltas).toHaveLength(6);
        expect(finishOf(summary).usage.inputTokens.total).toBe(12);
        expect(finishOf(summary).usage.outputTokens.total).toBe(30);
        expect(summary.parts.find((part) => part.type === "response-metadata")).toMatchObject({
          id: "msg_01QC4g3HwBThD4BaNtBckFDJ",
          modelId: "claude-sonnet-4-5-20250929",
        });
      },
    },
    "anthropic-tool-no-args.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe("I'll update the issue list for you.");
        expect(summary.toolCalls).toEqual([
          { toolCallId: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", toolName: "updateIssueList", input: "{}" },
        ]);
        expect(finishOf(summary).finishReason.unified).toBe("tool-calls");
      },
    },
    "duplicate-message-start.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe("Hello, World!");
        expect(summary.parts.filter((part) => part.type === "response-metadata")).toHaveLength(1);
        expect(finishOf(summary).usage.outputTokens.total).toBe(227);
      },
    },
  },
  "openai-chat": {
    "azure-model-router.1.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe("Capital of Denmark.");
        expect(finishOf(summary).usage.outputTokens).toEqual({ total: 78, text: 14, reasoning: 64 });
        expect(summary.parts.find((part) => part.type === "response-metadata")).toMatchObject({
          modelId: "gpt-5-nano-2025-08-07",
        });
      },
    },
    "openai-text.chunks.txt": {
      check(summary) {
        textOfLength(summary, "**Holiday Name:** Harmony Day", 1724);
        expect(summary.textDeltas.length).toBeGreaterThan(290);
        expect(finishOf(summary).usage.outputTokens.total).toBe(300);
        expect(finishOf(summary).finishReason).toEqual({ unified: "stop", raw: "stop" });
      },
    },
  },
  "openai-responses": {
    "openai-error.1.chunks.txt": {
      check() {
        throw new Error("the error recording must make doStream() reject");
      },
      rejects(error) {
        expect(APICallError.isInstance(error)).toBe(true);
        const apiError = error as APICallError;
        expect(apiError.statusCode).toBe(429);
        expect(apiError.message).toContain("You exceeded your current quota");
      },
    },
    "openai-reasoning-encrypted-content.1.chunks.txt": {
      check(summary) {
        expect(summary.reasoning.startsWith("**Calculating step-by-step using calculator**")).toBe(true);
        const encrypted = metadataOf(summary, "reasoning-start") as {
          openai: { reasoningEncryptedContent: string };
        }[];
        expect(encrypted[0]?.openai.reasoningEncryptedContent.startsWith("gAAAAA")).toBe(true);
        expect(summary.toolCalls.map((call) => [call.toolName, JSON.parse(call.input)])).toEqual([
          ["calculator", { a: 12, b: 7, op: "add" }],
          ["calculator", { a: 19, b: 3, op: "multiply" }],
          ["calculator", { a: 57, b: 10, op: "multiply" }],
        ]);
        expect(summary.text).toBe("The final result is **570**.");
      },
    },
    "parallel-tool-call-wrapper.1.chunks.txt": {
      call: weatherTools,
      check(summary) {
        // Lines 1 and 6 of this recording are cut off (not valid JSON); the client reports exactly those two.
        expect(summary.errors).toHaveLength(2);
        const messages = summary.errors.map((error) => String((error as Error).message));
        expect(messages[0]).toMatch(/^JSON parsing failed: Text: \{"type":"response\.created"/);
        expect(messages[1]).toMatch(/^JSON parsing failed: Text: \{"type":"response\.completed"/);
        // The undeclared `parallel` wrapper call is expanded into the two declared tools it wraps.
        expect(summary.toolCalls.map((call) => [call.toolName, JSON.parse(call.input)])).toEqual([
          ["weather", { location: "San Francisco" }],
          ["cityAttractions", { city: "Rome" }],
        ]);
      },
    },
  },
  google: {
    "google-reasoning-gemini3.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe('There are **3** "r"s in strawberry.\n\nSt**r**awbe**rr**y');
        expect(finishOf(summary).usage.outputTokens.reasoning).toBe(302);
        expect(JSON.stringify(metadataOf(summary, "text-delta"))).toContain("thoughtSignature");
      },
    },
    "google-reasoning.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe(
          'There are **3** "r"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.',
        );
        expect(finishOf(summary).usage.outputTokens).toEqual({ total: 285, text: 29, reasoning: 256 });
      },
    },
    "google-stream-no-args-tool-call.chunks.txt": {
      check(summary) {
        expect(summary.reasoning.startsWith("**Processing User Requests**")).toBe(true);
        expect(summary.toolCalls.map((call) => [call.toolName, JSON.parse(call.input)])).toEqual([
          ["read_theme", {}],
          ["read_screen", { id: "A" }],
          ["read_screen", { id: "B" }],
          ["read_screen", { id: "C" }],
        ]);
        expect(finishOf(summary).finishReason).toEqual({ unified: "tool-calls", raw: "STOP" });
      },
    },
    "google-text.chunks.txt": {
      check(summary) {
        expect(summary.text).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
        expect(finishOf(summary).usage.inputTokens.total).toBe(9);
      },
    },
    "google-tool-call-gemini3.chunks.txt": {
      check(summary) {
        expect(summary.toolCalls.map((call) => [call.toolName, call.input])).toEqual([
          ["weather", '{"location":"San Francisco"}'],
        ]);
        const signature = metadataOf(summary, "tool-call")[0] as { google: { thoughtSignature: string } };
        expect(signature.google.thoughtSignature.startsWith("EpEgCo4gAb")).toBe(true);
      },
    },
    "google-tool-call.chunks.txt": {
      check(summary) {
        expect(summary.toolCalls.map((call) => [call.toolName, call.input])).toEqual([
          ["weather", '{"location":"San Francisco"}'],
        ]);
        expect(finishOf(summary).usage.outputTokens).toEqual({ total: 60, text: 15, reasoning: 45 });
      },
    },
  },
};

describe.each(allWires)("replaying %s recordings through the double", (wire) => {
  const files = readdirSync(path.join(recordingsDir, wire)).filter((file) => file.endsWith(".chunks.txt"));

  it("has an expectation for every recorded file", () => {
    expect(files.length).toBeGreaterThan(0);
    expect(files.sort()).toEqual(Object.keys(expectations[wire]).sort());
  });

  it.each(files)("%s reads as the provider package expects", async (file) => {
    const expectation = expectations[wire][file];
    if (expectation === undefined) throw new Error(`no expectation for ${wire}/${file}`);
    const chunks = loadRecordedChunks(path.join(recordingsDir, wire, file));
    const double = await startDouble({ wire, responses: [{ chunks }] });
    const call = modelFor(wire, double.baseUrl).doStream(expectation.call ?? basicCall());
    if (expectation.rejects) {
      const error = await call.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expectation.rejects(error);
      return;
    }
    const summary = await collect((await call).stream);
    expect(summary.streamError).toBeUndefined();
    if (file !== "parallel-tool-call-wrapper.1.chunks.txt") expect(summary.errors).toEqual([]);
    expect(summary.finish).toBeDefined();
    expectation.check(summary);
  });
});

describe("event types newer than the pinned provider packages", () => {
  const futureEvents: Record<Wire, { chunks: string[]; futureErrors: number }> = {
    // Anthropic's client validates every event against a closed union: it reports the unknown one and goes on.
    anthropic: {
      chunks: [
        '{"type":"message_start","message":{"id":"msg_f","model":"claude-future","usage":{"input_tokens":3,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"before "}}',
        '{"type":"quantum_entanglement_update","index":0,"state":"superposed"}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"after"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}',
        '{"type":"message_stop"}',
      ],
      futureErrors: 1,
    },
    "openai-chat": {
      chunks: [
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-future","choices":[{"index":0,"delta":{"role":"assistant","content":"before "},"finish_reason":null}]}',
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-future","choices":[{"index":0,"delta":{"content":"after","hologram":{"frames":3}},"finish_reason":null}],"telemetry":{"x":1}}',
        '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-future","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
      ],
      futureErrors: 0,
    },
    "openai-responses": {
      chunks: [
        '{"type":"response.created","response":{"id":"resp_f","created_at":1,"model":"gpt-future"}}',
        '{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_f"}}',
        '{"type":"response.output_text.delta","item_id":"msg_f","delta":"before "}',
        '{"type":"response.hologram.delta","item_id":"msg_f","frames":3}',
        '{"type":"response.output_text.delta","item_id":"msg_f","delta":"after"}',
        '{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_f"}}',
        '{"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":2}}}',
      ],
      futureErrors: 0,
    },
    google: {
      chunks: [
        '{"candidates":[{"content":{"parts":[{"text":"before "}],"role":"model"},"index":0}],"hologramMetadata":{"frames":3}}',
        '{"candidates":[{"content":{"parts":[{"text":"after"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}',
      ],
      futureErrors: 0,
    },
  };

  it.each(allWires)("%s: an unknown event or field does not stop the stream", async (wire) => {
    const { chunks, futureErrors } = futureEvents[wire];
    const double = await startDouble({ wire, responses: [{ chunks }] });
    const { stream } = await modelFor(wire, double.baseUrl).doStream(basicCall());
    const summary = await collect(stream);
    expect(summary.streamError).toBeUndefined();
    expect(summary.text).toBe("before after");
    expect(summary.errors).toHaveLength(futureErrors);
    expect(summary.finish?.finishReason.unified).toBe("stop");
  });
});
