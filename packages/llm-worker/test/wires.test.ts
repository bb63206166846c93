// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import type { Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { createModelAdapter, type Item, Worker } from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, WIRES, workerFor } from "./helpers.js";
import { VIEWS } from "./wire-views.js";

describe.each(WIRES)("%s wire through the real adapter", (wire: Wire) => {
  const view = VIEWS[wire];

  it("runs a text turn and sends the system prompt and the user input", async () => {
    const double = await startDouble(wire);
    double.enqueue({
      parts: [{ type: "text", text: "Hello from the double.", chunkSize: 4 }],
      usage: { inputTokens: 120, outputTokens: 7, cacheReadTokens: 100 },
    });
    const { worker, persisted, events } = workerFor(double);

    const result = await worker.run("Say hello.");

    expect(result).toMatchObject({
      status: "finished",
      requests: 1,
      text: "Hello from the double.",
      stopReason: { kind: "stop" },
    });
    expect(persisted).toEqual([
      { type: "message", role: "user", content: [{ type: "text", text: "Say hello." }] },
      expect.objectContaining({ type: "message", role: "assistant" }),
    ]);
    expect(double.requests).toHaveLength(1);
    const [body] = bodies(double);
    expect(view.systemText(body)).toBe("You are a test pod.");
    expect(JSON.stringify(body)).toContain("Say hello.");
    const deltas = events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : []));
    expect(deltas.join("")).toBe("Hello from the double.");
    expect(deltas.length).toBeGreaterThan(1);
    const usage = events.flatMap((e) => (e.type === "usage" ? [e.usage] : []));
    expect(usage).toEqual([
      expect.objectContaining({ historyLen: 1, inputTokens: 120, cacheReadTokens: 100 }),
    ]);
  });

  it("executes a tool call, sends its result back and ends with the final text", async () => {
    const double = await startDouble(wire);
    const echo = recordingTool("echo");
    double.enqueue(
      { parts: [{ type: "tool_call", name: "echo", arguments: { text: "ping" }, chunkSize: 5 }] },
      { parts: [{ type: "text", text: "The tool said ping." }] },
    );
    const { worker, persisted } = workerFor(double, { tools: toolServer(echo.tool) });

    const result = await worker.run("Use the tool.");

    expect(result.status).toBe("finished");
    expect(result.text).toBe("The tool said ping.");
    expect(echo.calls).toEqual(["ping"]);
    const call = persisted.find((item) => item.type === "tool_call");
    expect(call).toMatchObject({ name: "echo", arguments: JSON.stringify({ text: "ping" }) });
    const second = bodies(double)[1];
    expect(view.toolNames(second)).toEqual(["echo"]);
    expect(view.toolCalls(second)).toEqual([
      { id: (call as any).call_id, name: "echo", args: { text: "ping" } },
    ]);
    expect(view.toolResults(second)).toEqual([{ id: (call as any).call_id, text: "echo: ping" }]);
    expect(persisted.map((item) => item.type)).toEqual(["message", "tool_call", "tool_result", "message"]);
  });

  it("runs a parallel two-tool batch concurrently and returns both results in call order", async () => {
    const double = await startDouble(wire);
    let active = 0;
    let maxActive = 0;
    const slow = (name: string) => {
      const { tool, executions } = recordingTool(name);
      const execute = tool.execute;
      tool.execute = async (args, ctx) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((resolve) => setTimeout(resolve, 60));
        active--;
        return execute(args, ctx);
      };
      return { tool, executions };
    };
    const alpha = slow("alpha");
    const beta = slow("beta");
    double.enqueue(
      {
        parts: [
          { type: "tool_call", name: "beta", arguments: { text: "one" } },
          { type: "tool_call", name: "alpha", arguments: { text: "two" } },
        ],
      },
      { parts: [{ type: "text", text: "both done" }] },
    );
    const { worker, persisted } = workerFor(double, { tools: toolServer(beta.tool, alpha.tool) });

    await worker.run("Call both.");

    expect(maxActive).toBe(2);
    const calls = persisted.filter((item) => item.type === "tool_call") as Extract<
      Item,
      { type: "tool_call" }
    >[];
    expect(calls.map((c) => c.name)).toEqual(["beta", "alpha"]);
    const second = bodies(double)[1];
    expect(view.toolNames(second)).toEqual(["alpha", "beta"]);
    expect(view.toolResults(second)).toEqual([
      { id: calls[0]?.call_id, text: "beta: one" },
      { id: calls[1]?.call_id, text: "alpha: two" },
    ]);
    expect([...alpha.executions.values(), ...beta.executions.values()]).toEqual([1, 1]);
  });
});

describe("reasoning round trips", () => {
  it("anthropic: thinking signatures and redacted thinking are stored on items and sent back", async () => {
    const double = await startDouble("anthropic");
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "Let me think.", signature: "sig-anthropic-1" },
          { type: "redacted_reasoning", data: "redacted-blob-2" },
          { type: "text", text: "Thought about it." },
        ],
      },
      { parts: [{ type: "text", text: "Again." }] },
    );
    const { worker, persisted } = workerFor(double, { config: { reasoning: 2048, max_tokens: 4096 } });

    await worker.run("Think.");
    await worker.run("And again.");

    expect(persisted.filter((i) => i.type === "reasoning")).toEqual([
      {
        type: "reasoning",
        text: "Let me think.",
        provider_metadata: { anthropic: { signature: "sig-anthropic-1" } },
      },
      { type: "reasoning", text: "", provider_metadata: { anthropic: { redactedData: "redacted-blob-2" } } },
    ]);
    const [first, second] = bodies(double);
    expect(first.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    const assistant = second.messages.find((m: any) => m.role === "assistant");
    expect(assistant.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: "Let me think.", signature: "sig-anthropic-1" },
      { type: "redacted_thinking", data: "redacted-blob-2" },
    ]);
  });

  it("openai responses: encrypted reasoning is requested with store:false and replayed from history", async () => {
    const double = await startDouble("openai-responses");
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "Summary of thought.", signature: "enc-content-1" },
          { type: "text", text: "Answer." },
        ],
      },
      { parts: [{ type: "text", text: "Second answer." }] },
    );
    const { worker, persisted } = workerFor(double, { config: { reasoning: "medium" } });

    await worker.run("Reason.");
    await worker.run("Once more.");

    const reasoning = persisted.find((i) => i.type === "reasoning");
    expect(reasoning).toMatchObject({
      text: "Summary of thought.",
      provider_metadata: { openai: { reasoningEncryptedContent: "enc-content-1" } },
    });
    const [first, second] = bodies(double);
    expect(first.store).toBe(false);
    expect(first.include).toContain("reasoning.encrypted_content");
    expect(first.reasoning).toEqual({ effort: "medium", summary: "auto" });
    const replayed = second.input.find((i: any) => i.type === "reasoning");
    expect(replayed).toMatchObject({
      encrypted_content: "enc-content-1",
      summary: [{ type: "summary_text", text: "Summary of thought." }],
    });
  });

  it("google: thought signatures on thoughts and function calls are sent back", async () => {
    const double = await startDouble("google");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "Plan the call.", signature: "thought-sig-1" },
          { type: "tool_call", name: "echo", arguments: { text: "x" }, thoughtSignature: "call-sig-2" },
        ],
      },
      { parts: [{ type: "text", text: "Done." }] },
    );
    const { worker, persisted } = workerFor(double, {
      tools: toolServer(echo.tool),
      config: { reasoning: 1024 },
    });

    await worker.run("Think and call.");

    expect(persisted.find((i) => i.type === "tool_call")).toMatchObject({
      provider_metadata: { google: { thoughtSignature: "call-sig-2" } },
    });
    const [first, second] = bodies(double);
    expect(first.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    const modelParts = second.contents.find((c: any) => c.role === "model").parts;
    expect(modelParts[0]).toEqual({
      text: "Plan the call.",
      thought: true,
      thoughtSignature: "thought-sig-1",
    });
    expect(modelParts[1]).toMatchObject({ functionCall: { name: "echo" }, thoughtSignature: "call-sig-2" });
  });

  it("openai-chat wire: an OpenAI-compatible server's reasoning_content is kept and sent back (ollama adapter)", async () => {
    const double = await startDouble("openai-chat");
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "Chain of thought." },
          { type: "text", text: "Result." },
        ],
      },
      { parts: [{ type: "text", text: "Next." }] },
    );
    const persisted: Item[] = [];
    const worker = new Worker({
      model: createModelAdapter("ollama/qwen3:8b", { baseUrl: double.baseUrl, env: {} }),
      systemPrompt: "sys",
      config: { reasoning: "high" },
      onHistoryAppend: (item) => {
        persisted.push(item);
      },
    });

    await worker.run("Reason.");
    await worker.run("Again.");

    expect(persisted[1]).toEqual({ type: "reasoning", text: "Chain of thought." });
    const [first, second] = bodies(double);
    expect(first.reasoning_effort).toBe("high");
    expect(double.requests[0]?.headers.authorization).toBeUndefined();
    const assistant = second.messages.find((m: any) => m.role === "assistant");
    expect(assistant).toMatchObject({ content: "Result.", reasoning_content: "Chain of thought." });
  });

  it("openai-chat wire: the official adapter sends reasoning_effort (the API streams no reasoning to keep)", async () => {
    const double = await startDouble("openai-chat");
    double.enqueue({ parts: [{ type: "text", text: "ok" }] });
    const { worker } = workerFor(double, { config: { reasoning: "low" } });
    await worker.run("go");
    expect(bodies(double)[0].reasoning_effort).toBe("low");
  });
});
