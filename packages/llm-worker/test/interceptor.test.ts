// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import { describe, expect, it } from "vitest";
import { HistoryAppendError, type Item, textMessage, type UsageRecord } from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, workerFor } from "./helpers.js";
import { VIEWS } from "./wire-views.js";

describe("interceptor seam and persistence hook", () => {
  it("commits pendingHistoryAppends at each step before the request sees them", async () => {
    const double = await startDouble("openai-responses");
    const queue: Item[] = [textMessage("system", "[notification] build finished")];
    double.enqueue({ parts: [{ type: "text", text: "noted" }] });
    const { worker, persisted } = workerFor(double, {
      interceptor: { pendingHistoryAppends: () => queue.splice(0) },
    });

    await worker.run("hello");

    expect(persisted.map((i) => (i.type === "message" ? i.role : i.type))).toEqual([
      "user",
      "system",
      "assistant",
    ]);
    const input = bodies(double)[0].input;
    expect(input.at(-1)).toEqual({ role: "developer", content: "[notification] build finished" });
  });

  it("preRequest continue_with changes only the request copy, never history", async () => {
    const double = await startDouble("anthropic");
    const big = recordingTool("read", { content: () => "FULL CONTENT ".repeat(20) });
    double.enqueue(
      { parts: [{ type: "tool_call", name: "read", arguments: { text: "f" } }] },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker } = workerFor(double, {
      tools: toolServer(big.tool),
      interceptor: {
        preRequest: ({ items }) => ({
          action: "continue_with",
          items: items.map((item) =>
            item.type === "tool_result"
              ? { type: "tool_result", call_id: item.call_id, summary: item.summary }
              : item,
          ),
        }),
      },
    });

    await worker.run("read it");

    expect(VIEWS.anthropic.toolResults(bodies(double)[1])[0]?.text).toBe("read: f");
    expect(worker.history.find((i) => i.type === "tool_result")).toMatchObject({
      content: expect.stringContaining("FULL"),
    });
  });

  it("preRequest yield ends the run as yielded and resume() continues it", async () => {
    const double = await startDouble("google");
    const echo = recordingTool("echo");
    let yieldOnce = false;
    double.enqueue(
      { parts: [{ type: "tool_call", name: "echo", arguments: { text: "1" } }] },
      { parts: [{ type: "text", text: "after compaction" }] },
    );
    const { worker } = workerFor(double, {
      tools: toolServer(echo.tool),
      interceptor: {
        preRequest: ({ requests }) => {
          if (requests === 1 && !yieldOnce) {
            yieldOnce = true;
            return { action: "yield" };
          }
          return { action: "continue" };
        },
      },
    });

    const first = await worker.run("go");
    expect(first).toMatchObject({ status: "yielded", requests: 1 });
    expect(worker.lastRunInterrupted).toBe(false);
    expect(double.requests).toHaveLength(1);

    const second = await worker.resume();
    expect(second).toMatchObject({ status: "finished", text: "after compaction" });
    expect([...echo.executions.values()]).toEqual([1]);
  });

  it("onTurnEnd may continue with messages or pause", async () => {
    const double = await startDouble("openai-chat");
    double.enqueue(
      { parts: [{ type: "text", text: "first" }] },
      { parts: [{ type: "text", text: "second" }] },
    );
    let ends = 0;
    const { worker, persisted } = workerFor(double, {
      interceptor: {
        onTurnEnd: () =>
          ++ends === 1
            ? { action: "continue", items: [textMessage("user", "missing summary, try again")] }
            : { action: "pause" },
      },
    });

    const result = await worker.run("go");

    expect(result).toMatchObject({ status: "paused", requests: 2, text: "second" });
    expect(persisted.map((i) => (i.type === "message" ? i.content[0]?.text : i.type))).toEqual([
      "go",
      "first",
      "missing summary, try again",
      "second",
    ]);
    expect(bodies(double)[1].messages.at(-1)).toEqual({
      role: "user",
      content: "missing summary, try again",
    });
  });

  it("a failing onHistoryAppend stops the turn and the unpersisted tool call never runs", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue({ parts: [{ type: "tool_call", name: "echo", arguments: { text: "x" } }] });
    const { worker } = workerFor(double, {
      tools: toolServer(echo.tool),
      onHistoryAppend: (item) => {
        if (item.type === "tool_call") throw new Error("disk full");
      },
    });

    const error = await worker.run("go").catch((e: unknown) => e);

    expect(HistoryAppendError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/could not persist a tool_call item.*disk full/);
    expect(echo.calls).toEqual([]);
    expect(worker.history.map((i) => i.type)).toEqual(["message"]);
  });

  it("stops at maxRequests per run with limit_reached, counting each run afresh", async () => {
    const double = await startDouble("openai-responses");
    const echo = recordingTool("echo");
    for (let i = 0; i < 4; i++) {
      double.enqueue({ parts: [{ type: "tool_call", name: "echo", arguments: { text: String(i) } }] });
    }
    const { worker } = workerFor(double, { tools: toolServer(echo.tool), maxRequests: 2 });

    expect(await worker.run("loop")).toMatchObject({ status: "limit_reached", requests: 2 });
    expect(await worker.run("loop more")).toMatchObject({ status: "limit_reached", requests: 2 });
    expect(echo.calls).toEqual(["0", "1", "2", "3"]);
  });

  it("reports usage per call through onUsage with the full prompt size and history length", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [{ type: "tool_call", name: "echo", arguments: { text: "u" } }],
        usage: { inputTokens: 1000, outputTokens: 20, cacheWriteTokens: 900 },
      },
      {
        parts: [{ type: "text", text: "ok" }],
        usage: { inputTokens: 1100, outputTokens: 5, cacheReadTokens: 900 },
      },
    );
    const usage: UsageRecord[] = [];
    const { worker } = workerFor(double, {
      tools: toolServer(echo.tool),
      onUsage: (u) => void usage.push(u),
    });

    await worker.run("go");

    expect(usage).toEqual([
      {
        historyLen: 1,
        inputTokens: 1000,
        cacheReadTokens: 0,
        cacheWriteTokens: 900,
        outputTokens: 20,
      },
      { historyLen: 3, inputTokens: 1100, cacheReadTokens: 900, cacheWriteTokens: 0, outputTokens: 5 },
    ]);
  });
});

describe("mid-history system items", () => {
  const note = textMessage("system", "[interrupt] the user changed the plan");
  const history: Item[] = [textMessage("user", "start"), textMessage("assistant", "ok"), note];

  it("anthropic: sent as user-role text (no mid-conversation system role)", async () => {
    const double = await startDouble("anthropic");
    double.enqueue({ parts: [{ type: "text", text: "fine" }] });
    const { worker } = workerFor(double, { history });
    await worker.run("continue");
    const body = bodies(double)[0];
    expect(body.system).toEqual([
      { type: "text", text: "You are a test pod.", cache_control: { type: "ephemeral" } },
    ]);
    expect(body.messages.at(-1).content.map((c: any) => c.text)).toEqual([note.content[0]?.text, "continue"]);
    expect(double.requests[0]?.headers["anthropic-beta"] ?? "").not.toContain("mid-conversation-system");
  });

  it("google: sent as user-role text (Gemini rejects system content after the start)", async () => {
    const double = await startDouble("google");
    double.enqueue({ parts: [{ type: "text", text: "fine" }] });
    const { worker } = workerFor(double, { history });
    await worker.run("continue");
    const body = bodies(double)[0];
    expect(body.systemInstruction.parts).toEqual([{ text: "You are a test pod." }]);
    expect(body.contents.at(-1)).toEqual({
      role: "user",
      parts: [{ text: note.content[0]?.text }, { text: "continue" }],
    });
  });

  it("openai chat: keeps the system role in place", async () => {
    const double = await startDouble("openai-chat");
    double.enqueue({ parts: [{ type: "text", text: "fine" }] });
    const { worker } = workerFor(double, { history });
    await worker.run("continue");
    expect(bodies(double)[0].messages.slice(-2)).toEqual([
      { role: "system", content: note.content[0]?.text },
      { role: "user", content: "continue" },
    ]);
  });
});
