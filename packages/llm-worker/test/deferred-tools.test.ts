// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON

import type { ProviderDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { requestTools } from "../src/adapters/tool-search.js";
import { type Tool, ToolError, ToolServer } from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, workerFor } from "./helpers.js";

// Deferred tools in the worker (docs/tools-deferred.md): the tool server keeps which tools are
// deferred, and each request's tools array is built from what was fixed at the flush.

const doubles: ProviderDouble[] = [];
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((double) => double.close()));
});

const deferred = (tool: Tool): Tool => ({ ...tool, deferred: true });

describe("the tools array with deferred tools", () => {
  const definitions = [
    {
      type: "function" as const,
      name: "a_loaded",
      description: "loaded",
      inputSchema: { type: "object" as const },
    },
    {
      type: "function" as const,
      name: "b_deferred",
      description: "deferred",
      inputSchema: { type: "object" as const },
    },
  ];
  const later = new Set(["b_deferred"]);

  it("anthropic: deferLoading on the deferred definitions, then the BM25 tool search tool", () => {
    const tools = requestTools(definitions, later, {
      reasoningStyle: "anthropic",
      providerOptionsKey: "anthropic",
    });
    expect(tools).toEqual([
      definitions[0],
      { ...definitions[1], providerOptions: { anthropic: { deferLoading: true } } },
      {
        type: "provider",
        id: "anthropic.tool_search_bm25_20251119",
        name: "tool_search_tool_bm25",
        args: {},
      },
    ]);
  });

  it("openai responses: deferLoading under its own key, then the hosted tool_search", () => {
    const tools = requestTools(definitions, later, {
      reasoningStyle: "openai-responses",
      providerOptionsKey: "openai",
    });
    expect(tools.at(1)).toMatchObject({ providerOptions: { openai: { deferLoading: true } } });
    expect(tools.at(-1)).toEqual({
      type: "provider",
      id: "openai.tool_search",
      name: "tool_search",
      args: {},
    });
  });

  it.each(["openai-chat", "openai-compatible", "google", "none"] as const)(
    "%s: the deferred definitions stay off the request",
    (reasoningStyle) => {
      expect(requestTools(definitions, later, { reasoningStyle, providerOptionsKey: "x" })).toEqual([
        definitions[0],
      ]);
    },
  );

  it("without deferred tools the array is the definitions, and the same inputs give the same bytes", () => {
    const adapter = { reasoningStyle: "anthropic" as const, providerOptionsKey: "anthropic" };
    expect(requestTools(definitions, new Set(), adapter)).toEqual(definitions);
    expect(JSON.stringify(requestTools(definitions, later, adapter))).toBe(
      JSON.stringify(requestTools(definitions, later, adapter)),
    );
  });
});

describe("ToolServer and deferred tools", () => {
  it("knows which tools are deferred and fixes them with the definitions at flush", async () => {
    const server = toolServer(recordingTool("loaded").tool, deferred(recordingTool("later").tool));
    await server.flushPending();
    expect(server.isDeferred("later")).toBe(true);
    expect(server.isDeferred("loaded")).toBe(false);
    expect([...server.deferredNames()]).toEqual(["later"]);
    expect(server.deferredDefinitions().map((d) => d.name)).toEqual(["later"]);
  });

  it("replaceDeferred swaps deferred tools without touching the flushed definitions", async () => {
    const server = toolServer(recordingTool("loaded").tool, deferred(recordingTool("later").tool));
    await server.flushPending();
    const before = JSON.stringify(server.definitions());
    server.replaceDeferred(["later"], [deferred(recordingTool("newer").tool)]);

    expect(JSON.stringify(server.definitions())).toBe(before);
    expect([...server.deferredNames()]).toEqual(["later"]);
    expect(server.deferredDefinitions().map((d) => d.name)).toEqual(["newer"]);
    expect(
      (
        await server.execute(
          { type: "tool_call", call_id: "c", name: "newer", arguments: '{"text":"x"}' },
          new AbortController().signal,
        )
      ).summary,
    ).toBe("newer: x");
    expect(
      (
        await server.execute(
          { type: "tool_call", call_id: "d", name: "later", arguments: '{"text":"x"}' },
          new AbortController().signal,
        )
      ).summary,
    ).toMatch(/unknown tool/);
  });

  it("replaceDeferred refuses to remove or shadow a tool that is not deferred, and changes nothing then", async () => {
    const server = toolServer(recordingTool("loaded").tool, deferred(recordingTool("later").tool));
    await server.flushPending();
    expect(() => server.replaceDeferred(["loaded"], [])).toThrow(ToolError);
    expect(() => server.replaceDeferred([], [deferred(recordingTool("loaded").tool)])).toThrow(/duplicate/);
    expect(() => server.replaceDeferred([], [recordingTool("plain").tool])).toThrow(/marked deferred/);
    expect(server.names()).toEqual(["later", "loaded"]);
    expect(server.isDeferred("later")).toBe(true);
  });
});

describe("native tool search through the real Anthropic adapter", () => {
  it("the search runs on the provider, the found deferred tool runs here, and both requests send the same tools", async () => {
    const double = await startDouble("anthropic");
    doubles.push(double);
    const weather = deferred(recordingTool("get_weather").tool);
    const local = recordingTool("read_notes");
    double.enqueue(
      {
        parts: [
          {
            type: "server_tool_call",
            id: "srvtoolu_s1",
            name: "tool_search_tool_bm25",
            input: { query: "weather" },
          },
          {
            type: "server_tool_result",
            name: "tool_search",
            result: {
              type: "tool_search_tool_search_result",
              tool_references: [{ type: "tool_reference", tool_name: "get_weather" }],
            },
          },
          { type: "tool_call", id: "toolu_w", name: "get_weather", arguments: { text: "Paris" } },
        ],
      },
      { parts: [{ type: "text", text: "sunny" }] },
    );
    const { worker } = workerFor(double, { tools: toolServer(local.tool, weather) });
    expect(await worker.run("weather in Paris?")).toMatchObject({ status: "finished" });

    const [first, second] = bodies(double);
    expect(JSON.stringify(first.tools)).toBe(JSON.stringify(second.tools));
    expect(first.tools).toEqual([
      expect.objectContaining({ name: "get_weather", defer_loading: true }),
      expect.not.objectContaining({ defer_loading: true }),
      { type: "tool_search_tool_bm25_20251119", name: "tool_search_tool_bm25" },
    ]);
    const blocks = second.messages.filter((m: any) => m.role === "assistant").flatMap((m: any) => m.content);
    expect(blocks.map((b: any) => b.type)).toEqual([
      "server_tool_use",
      "tool_search_tool_result",
      "tool_use",
    ]);
    expect(blocks[1].content).toMatchObject({ tool_references: [{ tool_name: "get_weather" }] });
    expect(worker.toolSearch).toBe("anthropic");
  });
});

describe("a worker without native tool search", () => {
  it("leaves deferred tools off every request", async () => {
    const double = await startDouble("openai-chat");
    doubles.push(double);
    double.enqueue({ parts: [{ type: "text", text: "ok" }] });
    const server = new ToolServer();
    server.registerTool(recordingTool("loaded").tool);
    server.registerTool(deferred(recordingTool("later").tool));
    const { worker } = workerFor(double, { tools: server });
    await worker.run("hi");
    expect(bodies(double)[0].tools.map((t: any) => t.function.name)).toEqual(["loaded"]);
    expect(worker.toolSearch).toBeUndefined();
  });
});
