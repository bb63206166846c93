// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { describe, expect, it } from "vitest";
import { ItemSchema, type WorkerEvent } from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, workerFor } from "./helpers.js";

const SEARCH_RESULTS = [
  {
    type: "web_search_result",
    url: "https://example.com/podkit",
    title: "podkit",
    encrypted_content: "enc-1",
    page_age: "2 days",
  },
];
const BASH_RESULT = {
  type: "bash_code_execution_result",
  stdout: "a.txt\n",
  stderr: "",
  return_code: 0,
  content: [],
};

/** The assistant content blocks of a captured Anthropic request, in order. */
function assistantBlocks(body: any): any[] {
  return body.messages.filter((m: any) => m.role === "assistant").flatMap((m: any) => m.content);
}

describe("provider-executed tools", () => {
  it("anthropic: web search, code execution and MCP connector blocks become items, are never run locally, and go back verbatim", async () => {
    const double = await startDouble("anthropic");
    // A local tool with the same name as the server tool: it must never run.
    const local = recordingTool("web_search");
    double.enqueue(
      {
        parts: [
          { type: "server_tool_call", id: "srvtoolu_1", name: "web_search", input: { query: "podkit" } },
          { type: "server_tool_result", name: "web_search", result: SEARCH_RESULTS },
          {
            type: "server_tool_call",
            id: "srvtoolu_2",
            name: "bash_code_execution",
            input: { command: "ls" },
          },
          { type: "server_tool_result", name: "bash_code_execution", result: BASH_RESULT },
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
          { type: "text", text: "Found it." },
        ],
      },
      { parts: [{ type: "text", text: "Next answer." }] },
    );
    const { worker, persisted } = workerFor(double, { tools: toolServer(local.tool) });

    const first = await worker.run("Search for podkit");
    await worker.run("And then?");

    expect(first).toMatchObject({ status: "finished", requests: 1, text: "Found it." });
    expect(local.calls).toEqual([]);
    const kinds = persisted.map((item) => item.type);
    expect(kinds.slice(0, 8)).toEqual([
      "message",
      "provider_tool_call",
      "provider_tool_result",
      "provider_tool_call",
      "provider_tool_result",
      "provider_tool_call",
      "provider_tool_result",
      "message",
    ]);
    // Persistable: every item survives a JSON round trip and the item schema.
    for (const item of persisted) expect(ItemSchema.parse(JSON.parse(JSON.stringify(item)))).toEqual(item);

    const sentBack = assistantBlocks(bodies(double)[1]);
    expect(sentBack.slice(0, 6)).toEqual([
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "podkit" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: SEARCH_RESULTS },
      { type: "server_tool_use", id: "srvtoolu_2", name: "bash_code_execution", input: { command: "ls" } },
      { type: "bash_code_execution_tool_result", tool_use_id: "srvtoolu_2", content: BASH_RESULT },
      { type: "mcp_tool_use", id: "mcptoolu_1", name: "echo", input: { text: "hi" }, server_name: "tools" },
      {
        type: "mcp_tool_result",
        tool_use_id: "mcptoolu_1",
        is_error: false,
        content: [{ type: "text", text: "hi" }],
      },
    ]);
    expect(sentBack[6]).toMatchObject({ type: "text", text: "Found it." });
  });

  it("anthropic: pause_turn is continued by sending the conversation back as it is, counted as a request", async () => {
    const double = await startDouble("anthropic");
    double.enqueue(
      {
        parts: [
          { type: "server_tool_call", id: "srvtoolu_1", name: "web_search", input: { query: "podkit" } },
          { type: "server_tool_result", name: "web_search", result: SEARCH_RESULTS },
        ],
        finishReason: "pause_turn",
      },
      { parts: [{ type: "text", text: "podkit is a runtime." }] },
    );
    const { worker, events } = workerFor(double);

    const result = await worker.run("What is podkit?");

    expect(result).toMatchObject({ status: "finished", requests: 2, text: "podkit is a runtime." });
    const ends = events.filter(
      (e): e is Extract<WorkerEvent, { type: "request_end" }> => e.type === "request_end",
    );
    expect(ends.map((e) => e.stopReason)).toEqual([
      { kind: "pause", raw: "pause_turn" },
      { kind: "stop", raw: "end_turn" },
    ]);
    // The continuation request ends with the paused assistant content, not a new user message.
    const continuation = bodies(double)[1];
    expect(continuation.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect(continuation.messages[1].content).toEqual([
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "podkit" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_1",
        content: SEARCH_RESULTS,
        // The newest item carries the prompt-cache breakpoint, as any last item does.
        cache_control: { type: "ephemeral" },
      },
    ]);
  });

  it("anthropic: pause_turn continuations are bounded by maxRequests", async () => {
    const double = await startDouble("anthropic");
    const paused = {
      parts: [{ type: "text" as const, text: "still searching " }],
      finishReason: "pause_turn" as const,
    };
    double.enqueue(paused, paused, paused);
    const { worker } = workerFor(double, { maxRequests: 2 });

    const result = await worker.run("Search forever");

    expect(result).toMatchObject({ status: "limit_reached", requests: 2, stopReason: { kind: "pause" } });
    expect(double.requests).toHaveLength(2);
  });

  it("anthropic: the code-execution container of a paused turn is named on the continuation, until it expires", async () => {
    const double = await startDouble("anthropic");
    const paused = {
      parts: [
        {
          type: "server_tool_call" as const,
          id: "srvtoolu_1",
          name: "bash_code_execution",
          input: { command: "ls" },
        },
        { type: "server_tool_result" as const, name: "bash_code_execution", result: BASH_RESULT },
      ],
      finishReason: "pause_turn" as const,
    };
    double.enqueue(
      { ...paused, container: { id: "container_live", expiresAt: "2999-01-01T00:00:00Z" } },
      {
        parts: [{ type: "text", text: "Listed." }],
        container: { id: "container_old", expiresAt: "2000-01-01T00:00:00Z" },
      },
      { parts: [{ type: "text", text: "Next." }] },
    );
    const { worker } = workerFor(double);

    await worker.run("List the files");
    await worker.run("And now?");

    expect(bodies(double).map((body) => body.container)).toEqual([undefined, "container_live", undefined]);
  });

  it("openai-responses: web search and MCP calls become items; the web search goes back as its output item", async () => {
    const double = await startDouble("openai-responses");
    double.enqueue(
      {
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
      },
      { parts: [{ type: "text", text: "Next." }] },
    );
    const { worker, persisted } = workerFor(double);

    await worker.run("Search");
    await worker.run("Next?");

    expect(
      persisted.filter((i) => i.type.startsWith("provider_tool")).map((i) => [i.type, (i as any).name]),
    ).toEqual([
      ["provider_tool_call", "web_search"],
      ["provider_tool_result", "web_search"],
      ["provider_tool_call", "mcp.echo"],
      ["provider_tool_result", "mcp.echo"],
    ]);
    const input = bodies(double)[1].input;
    expect(input).toContainEqual({
      type: "web_search_call",
      id: "ws_1",
      status: "completed",
      action: { type: "search", query: "podkit" },
    });
  });

  it("google: server tool parts go back verbatim; code execution stays in history but out of requests", async () => {
    const double = await startDouble("google");
    double.enqueue(
      {
        parts: [
          { type: "server_tool_call", name: "code_execution", input: { code: "print(1+1)" } },
          {
            type: "server_tool_result",
            name: "code_execution",
            result: { outcome: "OUTCOME_OK", output: "2\n" },
          },
          {
            type: "server_tool_call",
            id: "srv_1",
            name: "GOOGLE_SEARCH_WEB",
            input: { queries: ["podkit"] },
          },
          {
            type: "server_tool_result",
            name: "GOOGLE_SEARCH_WEB",
            result: { results: [{ title: "podkit" }] },
          },
          { type: "text", text: "Two." },
        ],
      },
      { parts: [{ type: "text", text: "Next." }] },
    );
    const { worker, persisted } = workerFor(double);

    await worker.run("Compute and search");
    await worker.run("Next?");

    expect(persisted.filter((i) => i.type.startsWith("provider_tool")).map((i) => (i as any).name)).toEqual([
      "code_execution",
      "code_execution",
      "server:GOOGLE_SEARCH_WEB",
      "server:GOOGLE_SEARCH_WEB",
    ]);
    const modelParts = bodies(double)[1]
      .contents.filter((c: any) => c.role === "model")
      .flatMap((c: any) => c.parts);
    expect(modelParts).toContainEqual({
      toolCall: { toolType: "GOOGLE_SEARCH_WEB", args: { queries: ["podkit"] }, id: "srv_1" },
    });
    expect(modelParts).toContainEqual({
      toolResponse: {
        toolType: "GOOGLE_SEARCH_WEB",
        response: { results: [{ title: "podkit" }] },
        id: "srv_1",
      },
    });
    expect(JSON.stringify(modelParts)).not.toContain("functionCall");
  });
});

describe("anthropic compaction blocks", () => {
  it("are their own item, out of the answer text and text deltas, and go back verbatim", async () => {
    const double = await startDouble("anthropic");
    const summary = "Earlier the user asked about configs; the answer was pod.toml.";
    double.enqueue(
      {
        parts: [
          { type: "compaction", text: summary, chunkSize: 16 },
          { type: "text", text: "Answer." },
        ],
      },
      { parts: [{ type: "text", text: "Next." }] },
    );
    const { worker, events, persisted } = workerFor(double);

    const result = await worker.run("Where is the config?");
    await worker.run("And then?");

    expect(result.text).toBe("Answer.");
    const deltas = events.filter(
      (e): e is Extract<WorkerEvent, { type: "text_delta" }> => e.type === "text_delta",
    );
    expect(deltas.map((e) => e.delta).join("")).toBe("Answer.Next.");
    expect(persisted.slice(1, 3)).toEqual([
      { type: "compaction", text: summary, provider_metadata: { anthropic: { type: "compaction" } } },
      { type: "message", role: "assistant", content: [{ type: "text", text: "Answer." }] },
    ]);
    expect(assistantBlocks(bodies(double)[1])[0]).toEqual({ type: "compaction", content: summary });
  });
});
