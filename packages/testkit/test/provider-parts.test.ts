import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { ScriptError, type ScriptedResponse, type Wire } from "../src/index.js";
import { collect } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { allWires, basicCall, modelFor } from "./support/models.js";

const startDouble = useDoubles();

async function stream(wire: Wire, response: ScriptedResponse) {
  const double = await startDouble({ wire, responses: [response] });
  const { stream } = await modelFor(wire, double.baseUrl).doStream(basicCall());
  return collect(stream);
}

function ofType<T extends LanguageModelV3StreamPart["type"]>(parts: LanguageModelV3StreamPart[], type: T) {
  return parts.filter((part): part is Extract<LanguageModelV3StreamPart, { type: T }> => part.type === type);
}

describe("stop reasons in each wire's own words", () => {
  const raw: Record<Wire, { length: string; content_filter: string | undefined }> = {
    anthropic: { length: "max_tokens", content_filter: "refusal" },
    "openai-chat": { length: "length", content_filter: "content_filter" },
    "openai-responses": { length: "max_output_tokens", content_filter: "content_filter" },
    google: { length: "MAX_TOKENS", content_filter: "SAFETY" },
  };

  it.each(allWires)("%s: length and content filter reach the AI SDK as its unified reasons", async (wire) => {
    const cut = await stream(wire, {
      parts: [{ type: "text", text: "Cut off mid" }],
      finishReason: "length",
    });
    expect(cut.finish?.finishReason).toEqual({ unified: "length", raw: raw[wire].length });
    const filtered = await stream(wire, {
      parts: [{ type: "text", text: "I can" }],
      finishReason: "content_filter",
    });
    expect(filtered.finish?.finishReason).toEqual({
      unified: "content-filter",
      raw: raw[wire].content_filter,
    });
  });

  it("anthropic: pause_turn arrives as the raw value (the AI SDK calls it stop)", async () => {
    const paused = await stream("anthropic", {
      parts: [{ type: "text", text: "Searching" }],
      finishReason: "pause_turn",
    });
    expect(paused.finish?.finishReason).toEqual({ unified: "stop", raw: "pause_turn" });
  });

  it.each(["openai-chat", "openai-responses", "google"] as Wire[])(
    "%s: pause_turn is refused at enqueue (the wire has no such stop reason)",
    async (wire) => {
      const double = await startDouble({ wire });
      expect(() =>
        double.enqueue({ parts: [{ type: "text", text: "x" }], finishReason: "pause_turn" }),
      ).toThrow(ScriptError);
    },
  );
});

describe("an error object inside the stream", () => {
  const errors: Record<Wire, Record<string, unknown>> = {
    anthropic: { type: "overloaded_error", message: "upstream overloaded" },
    "openai-chat": { message: "upstream overloaded", type: "server_error", code: "upstream_error" },
    "openai-responses": { code: "server_error", message: "upstream overloaded" },
    google: { code: 500, message: "upstream overloaded", status: "INTERNAL" },
  };
  const script = (wire: Wire): ScriptedResponse => ({
    parts: [
      { type: "text", text: "partial answer" },
      { type: "error", error: errors[wire] },
      { type: "text", text: "never sent" },
    ],
  });

  it.each(allWires)("%s: reaches the client as an error part after the text before it", async (wire) => {
    const summary = await stream(wire, script(wire));
    expect(summary.text).toBe("partial answer");
    expect(JSON.stringify(summary.errors.map((e) => (e instanceof Error ? e.message : e)))).toContain(
      "upstream overloaded",
    );
    if (summary.finish) expect(summary.finish.finishReason.unified).not.toBe("stop");
  });
});

describe("provider-executed tools", () => {
  it("anthropic: web search, code execution and the MCP connector become providerExecuted calls and results", async () => {
    const summary = await stream("anthropic", {
      parts: [
        { type: "server_tool_call", id: "srvtoolu_1", name: "web_search", input: { query: "podkit" } },
        {
          type: "server_tool_result",
          name: "web_search",
          result: [
            {
              type: "web_search_result",
              url: "https://example.com",
              title: "Ex",
              encrypted_content: "enc",
              page_age: null,
            },
          ],
        },
        { type: "server_tool_call", id: "srvtoolu_2", name: "bash_code_execution", input: { command: "ls" } },
        {
          type: "server_tool_result",
          name: "bash_code_execution",
          result: {
            type: "bash_code_execution_result",
            stdout: "a.txt\n",
            stderr: "",
            return_code: 0,
            content: [],
          },
        },
        {
          type: "server_tool_call",
          id: "mcptoolu_1",
          name: "echo",
          input: { text: "hi" },
          mcpServer: "tools",
        },
        {
          type: "server_tool_result",
          name: "echo",
          mcpServer: "tools",
          result: [{ type: "text", text: "hi" }],
        },
        { type: "text", text: "Done." },
      ],
    });
    const calls = ofType(summary.parts, "tool-call");
    expect(calls.map((c) => [c.toolCallId, c.toolName, c.providerExecuted])).toEqual([
      ["srvtoolu_1", "web_search", true],
      ["srvtoolu_2", "code_execution", true],
      ["mcptoolu_1", "echo", true],
    ]);
    const results = ofType(summary.parts, "tool-result");
    expect(results.map((r) => r.toolCallId)).toEqual(["srvtoolu_1", "srvtoolu_2", "mcptoolu_1"]);
    expect(results[1]?.result).toMatchObject({ type: "bash_code_execution_result", stdout: "a.txt\n" });
    expect(summary.text).toBe("Done.");
  });

  it("openai-responses: a web search call and an MCP call are one output item each, completed by the result", async () => {
    const summary = await stream("openai-responses", {
      parts: [
        { type: "server_tool_call", id: "ws_1", name: "web_search", input: {} },
        {
          type: "server_tool_result",
          name: "web_search",
          result: { action: { type: "search", query: "podkit" } },
        },
        { type: "server_tool_call", id: "mcp_1", name: "echo", input: { text: "hi" }, mcpServer: "tools" },
        { type: "server_tool_result", name: "echo", result: { output: "hi" } },
        { type: "text", text: "Found it." },
      ],
    });
    const calls = ofType(summary.parts, "tool-call").filter((c) => c.providerExecuted);
    expect(calls.map((c) => [c.toolCallId, c.toolName])).toEqual([
      ["ws_1", "web_search"],
      ["mcp_1", "mcp.echo"],
    ]);
    const results = ofType(summary.parts, "tool-result");
    expect(results[0]?.result).toEqual({ action: { type: "search", query: "podkit" } });
    expect(results[1]?.result).toMatchObject({ type: "call", serverLabel: "tools", output: "hi" });
  });

  it("google: code execution and a server tool call (grounding search) become providerExecuted parts", async () => {
    const summary = await stream("google", {
      parts: [
        { type: "server_tool_call", name: "code_execution", input: { code: "print(1+1)" } },
        {
          type: "server_tool_result",
          name: "code_execution",
          result: { outcome: "OUTCOME_OK", output: "2\n" },
        },
        { type: "server_tool_call", id: "srv_1", name: "GOOGLE_SEARCH_WEB", input: { queries: ["podkit"] } },
        { type: "server_tool_result", name: "GOOGLE_SEARCH_WEB", result: { results: [] } },
        { type: "text", text: "Two." },
      ],
    });
    const calls = ofType(summary.parts, "tool-call");
    expect(calls.map((c) => [c.toolName, c.providerExecuted])).toEqual([
      ["code_execution", true],
      ["server:GOOGLE_SEARCH_WEB", true],
    ]);
    expect(JSON.parse(calls[0]?.input ?? "{}")).toEqual({ language: "PYTHON", code: "print(1+1)" });
    const results = ofType(summary.parts, "tool-result");
    expect(results.map((r) => r.result)).toEqual([{ outcome: "OUTCOME_OK", output: "2\n" }, { results: [] }]);
  });

  it("openai-chat has no provider-executed tools or compaction: such scripts are refused at enqueue", async () => {
    const double = await startDouble({ wire: "openai-chat" });
    expect(() =>
      double.enqueue({ parts: [{ type: "server_tool_call", name: "web_search", input: {} }] }),
    ).toThrow(ScriptError);
    expect(() => double.enqueue({ parts: [{ type: "compaction", text: "summary" }] })).toThrow(ScriptError);
  });
});

describe("anthropic compaction blocks", () => {
  it("stream as a text block tagged as compaction in its metadata", async () => {
    const summary = await stream("anthropic", {
      parts: [
        { type: "compaction", text: "Earlier: the user asked about configs.", chunkSize: 10 },
        { type: "text", text: "Answer." },
      ],
    });
    const starts = ofType(summary.parts, "text-start");
    expect(starts.map((s) => s.providerMetadata)).toEqual([{ anthropic: { type: "compaction" } }, undefined]);
    expect(summary.text).toBe("Earlier: the user asked about configs.Answer.");
  });
});

describe("raw events", () => {
  it("are sent verbatim, so a test can reproduce a proxy that drops an event", async () => {
    // A reasoning summary part for an item whose output_item.added never came crashes the parser.
    const summary = await stream("openai-responses", {
      parts: [
        { type: "text", text: "Hi" },
        {
          type: "raw",
          event: "response.reasoning_summary_part.added",
          data: {
            type: "response.reasoning_summary_part.added",
            item_id: "rs_missing",
            output_index: 5,
            summary_index: 1,
            part: { type: "summary_text", text: "" },
          },
        },
      ],
    });
    expect(String(summary.streamError)).toMatch(
      /TypeError: Cannot read properties of undefined \(reading 'summaryParts'\)/,
    );
  });
});
