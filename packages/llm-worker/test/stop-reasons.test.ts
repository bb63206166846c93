import type { Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { EmptyResponseError, ProviderError, type WorkerEvent } from "../src/index.js";
import { recordingTool, startDouble, toolServer, WIRES, workerFor } from "./helpers.js";

/** What each wire sends for an answer cut at the output limit and for a filtered one. */
const RAW: Record<Wire, { length: string; filter: string | undefined }> = {
  anthropic: { length: "max_tokens", filter: "refusal" },
  "openai-responses": { length: "max_output_tokens", filter: "content_filter" },
  "openai-chat": { length: "length", filter: "content_filter" },
  google: { length: "MAX_TOKENS", filter: "SAFETY" },
};

function ofType<T extends WorkerEvent["type"]>(events: WorkerEvent[], type: T) {
  return events.filter((event): event is Extract<WorkerEvent, { type: T }> => event.type === type);
}

describe("stop reasons", () => {
  it.each(WIRES)(
    "%s: every request reports its stop reason and the run result carries the last one",
    async (wire) => {
      const double = await startDouble(wire);
      const echo = recordingTool("echo");
      double.enqueue(
        { parts: [{ type: "tool_call", name: "echo", arguments: { text: "a" } }] },
        { parts: [{ type: "text", text: "Done." }] },
      );
      const { worker, events } = workerFor(double, { tools: toolServer(echo.tool) });

      const result = await worker.run("go");

      expect(ofType(events, "request_end").map((e) => [e.request, e.stopReason.kind])).toEqual([
        [1, "tool-calls"],
        [2, "stop"],
      ]);
      expect(result).toMatchObject({
        status: "finished",
        requests: 2,
        text: "Done.",
        stopReason: { kind: "stop" },
      });
    },
  );

  it.each(WIRES)(
    "%s: a final answer cut at the output limit is visible in the result and an event",
    async (wire) => {
      const double = await startDouble(wire);
      double.enqueue({ parts: [{ type: "text", text: "The answer is forty" }], finishReason: "length" });
      const { worker, events, persisted } = workerFor(double);

      const result = await worker.run("What is the answer?");

      expect(result).toEqual({
        status: "finished",
        requests: 1,
        text: "The answer is forty",
        stopReason: { kind: "length", raw: RAW[wire].length },
      });
      expect(ofType(events, "answer_truncated")).toEqual([
        { type: "answer_truncated", request: 1, stopReason: result.stopReason, text: "The answer is forty" },
      ]);
      // What arrived is still history: the caller decides whether to ask for the rest.
      expect(persisted.map((item) => item.type)).toEqual(["message", "message"]);
    },
  );

  it.each(WIRES)(
    "%s: a filtered answer ends with content-filter and the provider's own value",
    async (wire) => {
      const double = await startDouble(wire);
      double.enqueue({ parts: [{ type: "text", text: "I can" }], finishReason: "content_filter" });
      const { worker, events } = workerFor(double);

      const result = await worker.run("Tell me something");

      expect(result.stopReason).toEqual({ kind: "content-filter", raw: RAW[wire].filter });
      expect(ofType(events, "answer_truncated")).toHaveLength(1);
    },
  );

  it.each(WIRES)("%s: an empty response cut at the output limit is an error, not a finish", async (wire) => {
    const double = await startDouble(wire);
    double.enqueue({ parts: [], finishReason: "length", usage: { inputTokens: 10, outputTokens: 4096 } });
    const { worker, persisted } = workerFor(double);

    const error = await worker.run("Think hard").catch((e: unknown) => e);

    expect(EmptyResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ kind: "empty", isRetryable: false, stopReason: { kind: "length" } });
    expect((error as Error).message).toMatch(/raise max_tokens/);
    expect(persisted.map((item) => item.type)).toEqual(["message"]);
    expect(worker.lastRunInterrupted).toBe(true);
  });

  it("anthropic: a response that spent its whole output limit thinking is an empty answer too", async () => {
    const double = await startDouble("anthropic");
    double.enqueue({
      parts: [{ type: "reasoning", text: "Let me think about this for a very long time", signature: "sig" }],
      finishReason: "length",
    });
    const { worker, persisted } = workerFor(double, { config: { max_tokens: 64, reasoning: 1024 } });

    const error = await worker.run("Think hard").catch((e: unknown) => e);

    expect(EmptyResponseError.isInstance(error)).toBe(true);
    expect(persisted.map((item) => item.type)).toEqual(["message"]);
  });

  it.each(WIRES)(
    "%s: an error object inside the stream fails the run and commits no answer",
    async (wire) => {
      const double = await startDouble(wire);
      const error = {
        anthropic: { type: "api_error", message: "upstream overloaded" },
        "openai-chat": { message: "upstream overloaded", type: "server_error", code: "upstream_error" },
        "openai-responses": { code: "server_error", message: "upstream overloaded" },
        google: { code: 500, message: "upstream overloaded", status: "INTERNAL" },
      }[wire];
      // Retryable on some wires: every attempt meets the same error.
      for (let i = 0; i < 3; i++) double.enqueue({ parts: [{ type: "error", error }] });
      const { worker, persisted } = workerFor(double);

      const failure = await worker.run("hi").catch((e: unknown) => e);

      expect(ProviderError.isInstance(failure)).toBe(true);
      expect((failure as Error).message).toContain("upstream overloaded");
      expect(persisted.map((item) => item.type)).toEqual(["message"]);
    },
  );

  it("anthropic: a tool call the stream began but never finished is dropped and reported, never run", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue({
      parts: [
        { type: "text", text: "Let me check." },
        {
          type: "raw",
          event: "content_block_start",
          data: {
            type: "content_block_start",
            index: 1,
            content_block: { type: "tool_use", id: "toolu_cut", name: "echo", input: {} },
          },
        },
        {
          type: "raw",
          event: "content_block_delta",
          data: {
            type: "content_block_delta",
            index: 1,
            delta: { type: "input_json_delta", partial_json: '{"te' },
          },
        },
      ],
    });
    const { worker, events } = workerFor(double, { tools: toolServer(echo.tool) });

    const result = await worker.run("go");

    expect(ofType(events, "tool_call_dropped")).toEqual([
      { type: "tool_call_dropped", request: 1, callId: "toolu_cut", name: "echo" },
    ]);
    expect(ofType(events, "warning").map((e) => e.message)).toContainEqual(
      expect.stringContaining('inside a call of tool "echo" (toolu_cut)'),
    );
    expect(echo.calls).toEqual([]);
    expect(result).toMatchObject({ status: "finished", text: "Let me check." });
  });

  it("anthropic: a call cut by a broken stream is reported as dropped, and only the re-sent call runs", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [
          {
            type: "tool_call",
            id: "toolu_cut",
            name: "echo",
            arguments: { text: "a long argument" },
            chunkSize: 4,
          },
        ],
        fault: { kind: "reset", afterEvents: 5 },
      },
      { parts: [{ type: "tool_call", id: "toolu_whole", name: "echo", arguments: { text: "again" } }] },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker, events } = workerFor(double, { tools: toolServer(echo.tool) });

    const result = await worker.run("go");

    expect(ofType(events, "tool_call_dropped")).toEqual([
      { type: "tool_call_dropped", request: 1, callId: "toolu_cut", name: "echo" },
    ]);
    expect(echo.calls).toEqual(["again"]);
    expect(result).toMatchObject({ status: "finished", text: "done" });
  });
});
