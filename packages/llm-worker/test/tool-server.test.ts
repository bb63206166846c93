// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Tool, ToolError, ToolServer } from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, workerFor } from "./helpers.js";
import { VIEWS } from "./wire-views.js";

describe("tool server", () => {
  it("flushPending() before the first run materializes each factory exactly once", async () => {
    const double = await startDouble("anthropic");
    const tools = new ToolServer();
    let built = 0;
    tools.registerTool(() => {
      built++;
      return [recordingTool("zeta").tool, recordingTool("alpha").tool];
    });

    expect(built).toBe(0);
    const [names, again] = await Promise.all([tools.flushPending(), tools.flushPending()]);
    expect(names).toEqual(["alpha", "zeta"]);
    expect(again).toBe(names);
    expect(built).toBe(1);

    double.enqueue({ parts: [{ type: "text", text: "a" }] }, { parts: [{ type: "text", text: "b" }] });
    const { worker } = workerFor(double, { tools });
    await worker.run("one");
    await worker.run("two");

    expect(built).toBe(1);
    expect(VIEWS.anthropic.toolNames(bodies(double)[0])).toEqual(["alpha", "zeta"]);
  });

  it("registering after the lock is a ToolError naming the tool", async () => {
    const tools = toolServer(recordingTool("echo").tool);
    await tools.flushPending();
    expect(tools.locked).toBe(true);
    let caught: unknown;
    try {
      tools.registerTool(recordingTool("late").tool);
    } catch (error) {
      caught = error;
    }
    expect(ToolError.isInstance(caught)).toBe(true);
    expect((caught as Error).message).toMatch(/cannot register tool "late": the tool server is locked/);
  });

  it("a duplicate tool name rejects flushPending with a ToolError instead of crashing", async () => {
    const tools = toolServer(recordingTool("echo").tool, recordingTool("echo").tool);
    await expect(tools.flushPending()).rejects.toMatchObject({ name: "ToolError", toolName: "echo" });
    await expect(tools.flushPending()).rejects.toThrow(/duplicate tool name "echo"/);
  });

  it("a failing factory rejects flushPending with a ToolError keeping the cause", async () => {
    const tools = new ToolServer();
    const cause = new Error("no config");
    tools.registerTool(() => {
      throw cause;
    });
    await expect(tools.flushPending()).rejects.toMatchObject({ name: "ToolError", cause });
  });

  it("sends definitions sorted by name and accepts JSON Schema input schemas", async () => {
    const double = await startDouble("openai-chat");
    const jsonTool: Tool = {
      name: "Bravo",
      description: "JSON-schema tool",
      inputSchema: {
        type: "object",
        properties: { n: { type: "integer" } },
        required: ["n"],
        additionalProperties: false,
      },
      execute: (args: { n: number }) => ({ summary: `n=${args.n}` }),
    };
    double.enqueue(
      {
        parts: [
          { type: "tool_call", name: "Bravo", arguments: { n: "not a number" } },
          { type: "tool_call", name: "Bravo", arguments: { n: 3 } },
        ],
      },
      { parts: [{ type: "text", text: "ok" }] },
    );
    const { worker } = workerFor(double, {
      tools: toolServer(recordingTool("charlie").tool, jsonTool, recordingTool("alpha").tool),
    });

    await worker.run("go");

    const [first, second] = bodies(double);
    expect(VIEWS["openai-chat"].toolNames(first)).toEqual(["Bravo", "alpha", "charlie"]);
    expect(first.tools[0].function.parameters).toMatchObject({ required: ["n"] });
    const results = VIEWS["openai-chat"].toolResults(second).map((r) => r.text);
    expect(results[0]).toMatch(/^invalid arguments for "Bravo": n: /);
    expect(results[1]).toBe("n=3");
  });

  it("gives the model error results for invalid JSON, unknown tools and thrown errors", async () => {
    const double = await startDouble("anthropic");
    const failing: Tool<{ text: string }> = {
      name: "fails",
      description: "Always throws.",
      inputSchema: z.object({ text: z.string() }),
      execute: () => {
        throw new Error("disk on fire");
      },
    };
    double.enqueue(
      {
        parts: [
          { type: "tool_call", name: "fails", arguments: "{not json" },
          { type: "tool_call", name: "missing", arguments: {} },
          { type: "tool_call", name: "fails", arguments: { text: "x" } },
        ],
      },
      { parts: [{ type: "text", text: "ok" }] },
    );
    const { worker, persisted } = workerFor(double, { tools: toolServer(failing) });

    await worker.run("go");

    const results = persisted.filter((i) => i.type === "tool_result");
    expect(results.map((r: any) => r.is_error)).toEqual([true, true, true]);
    expect((results[0] as any).summary).toMatch(/not valid JSON/);
    expect((results[1] as any).summary).toBe('unknown tool "missing"; available tools: fails');
    expect((results[2] as any).summary).toBe('tool "fails" failed: disk on fire');
    const blocks = bodies(double)[1].messages.at(-1).content;
    expect(blocks.every((b: any) => b.type === "tool_result" && b.is_error === true)).toBe(true);
  });

  it("preToolCall deny gives a synthetic error result; postToolCall rewrites; the cap bounds summary and content together", async () => {
    const double = await startDouble("google");
    const big = recordingTool("big", { content: () => "é".repeat(200) });
    const secret = recordingTool("secret");
    double.enqueue(
      {
        parts: [
          { type: "tool_call", name: "secret", arguments: { text: "s" } },
          { type: "tool_call", name: "big", arguments: { text: "b" } },
        ],
      },
      { parts: [{ type: "text", text: "ok" }] },
    );
    const tools = toolServer(big.tool, secret.tool);
    tools.setOutputLimits({ defaultMaxBytes: 1000, perTool: { big: 200 } });
    const { worker, persisted } = workerFor(double, {
      tools,
      interceptor: {
        preToolCall: (call) =>
          call.name === "secret" ? { action: "deny", reason: "not in scope" } : { action: "continue" },
        // A result's stored `media` are references, not the bytes a rewrite may give: left out.
        postToolCall: (_call, { media: _stored, ...result }) =>
          result.is_error
            ? { action: "continue" }
            : { action: "rewrite", result: { ...result, summary: "rewritten" } },
      },
    });

    await worker.run("go");

    expect(secret.calls).toEqual([]);
    const [denied, capped] = persisted.filter((i) => i.type === "tool_result") as any[];
    expect(denied).toMatchObject({ summary: "tool call denied: not in scope", is_error: true });
    expect(capped.summary).toBe("rewritten");
    // What the model sees (summary, separator, content) stays within the 200-byte cap, notice included.
    const shown = Buffer.byteLength(`rewritten\n\n${capped.content}`);
    expect(shown).toBeLessThanOrEqual(200);
    expect(shown).toBeGreaterThan(190);
    expect(capped.content).toMatch(
      /^(é)+\n\[output truncated: showing \d+ of 400 bytes; narrow the request to see the rest\]$/,
    );
    const sent = VIEWS.google.toolResults(bodies(double)[1]);
    expect(sent.map((r) => r.text)).toEqual([
      "tool call denied: not in scope",
      `rewritten\n\n${capped.content}`,
    ]);
  });
});
