// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { createModelAdapter, Worker } from "@podkit/llm-worker";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { mcpToolPackage } from "../../src/index.js";
import { loadPackage, stdioServer } from "./support.js";

const doubles: ProviderDouble[] = [];
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((double) => double.close()));
});

/** The tool_result blocks of a captured Anthropic request. */
function toolResults(body: any): { id: string; text: string; isError: boolean }[] {
  return body.messages
    .flatMap((message: any) => (Array.isArray(message.content) ? message.content : []))
    .filter((part: any) => part.type === "tool_result")
    .map((part: any) => ({
      id: part.tool_use_id,
      text: typeof part.content === "string" ? part.content : part.content.map((c: any) => c.text).join(""),
      isError: part.is_error === true,
    }));
}

describe("MCP tools driven by a model", () => {
  it("the model's call reaches the MCP server and the result goes back in the next request", async () => {
    const double = await startProviderDouble({ wire: "anthropic" });
    doubles.push(double);
    double.enqueue(
      {
        parts: [
          {
            type: "tool_call",
            id: "toolu_echo",
            name: "mcp__fx__echo",
            arguments: { text: "from the model" },
          },
          { type: "tool_call", id: "toolu_fail", name: "mcp__fx__fail", arguments: { reason: "quota" } },
        ],
      },
      { parts: [{ type: "text", text: "done" }] },
    );
    const loaded = await loadPackage(mcpToolPackage([stdioServer("fx")]));
    const worker = new Worker({
      model: createModelAdapter("anthropic/claude-sonnet-4-5", {
        apiKey: "test-key",
        baseUrl: double.baseUrl,
      }),
      systemPrompt: "You are a test pod.",
      tools: loaded.server,
    });

    const result = await worker.run("use the MCP tools");

    expect(result).toMatchObject({ status: "finished", text: "done" });
    const [first, second] = double.requests.map((request) => request.body as any);
    const echo = first.tools.find((tool: any) => tool.name === "mcp__fx__echo");
    expect(echo.input_schema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
    expect(toolResults(second)).toEqual([
      { id: "toolu_echo", text: "echo: from the model", isError: false },
      { id: "toolu_fail", text: "mcp__fx__fail failed: refused: quota", isError: true },
    ]);
  });
});
