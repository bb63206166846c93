import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AbortedError,
  CancelledError,
  DEFAULT_INTERRUPTED_TOOL_SUMMARY,
  type Tool,
  WorkerBusyError,
} from "../src/index.js";
import { bodies, recordingTool, startDouble, toolServer, waitFor, workerFor } from "./helpers.js";
import { VIEWS } from "./wire-views.js";

describe("cancellation", () => {
  it("aborting mid-stream throws AbortedError, commits no partial text, and the next run proceeds", async () => {
    const double = await startDouble("anthropic");
    double.enqueue({
      parts: [{ type: "text", text: "partial output that never finishes", chunkSize: 4 }],
      fault: { kind: "stall", afterEvents: 4, ms: 20_000 },
    });
    const { worker, persisted, events } = workerFor(double);
    const controller = new AbortController();
    worker.subscribe((event) => {
      if (event.type === "text_delta") controller.abort();
    });

    const error = await worker.run("first", { signal: controller.signal }).catch((e: unknown) => e);

    expect(AbortedError.isInstance(error)).toBe(true);
    expect(events.some((e) => e.type === "text_delta")).toBe(true);
    expect(worker.lastRunInterrupted).toBe(true);
    expect(persisted.map((i) => i.type)).toEqual(["message"]);
    expect(worker.history).toEqual(persisted);

    double.enqueue({ parts: [{ type: "text", text: "fresh answer" }] });
    const result = await worker.run("second");

    expect(result.text).toBe("fresh answer");
    expect(worker.lastRunInterrupted).toBe(false);
    const next = bodies(double)[1];
    expect(JSON.stringify(next)).not.toContain("partial output");
    expect(next.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  });

  it("aborting mid-tool throws AbortedError promptly, commits no result, and the next run closes the call", async () => {
    const double = await startDouble("openai-chat");
    let started = 0;
    let sawAbort = false;
    const stubborn: Tool<{ text: string }> = {
      name: "stubborn",
      description: "Ignores cancellation.",
      inputSchema: z.object({ text: z.string() }),
      execute: () => new Promise(() => {}),
    };
    const polite: Tool<{ text: string }> = {
      name: "polite",
      description: "Stops when aborted.",
      inputSchema: z.object({ text: z.string() }),
      execute: (_args, ctx) =>
        new Promise((_resolve, reject) => {
          started++;
          ctx.signal.addEventListener("abort", () => {
            sawAbort = true;
            reject(ctx.signal.reason);
          });
        }),
    };
    double.enqueue({
      parts: [
        { type: "tool_call", name: "polite", arguments: { text: "a" } },
        { type: "tool_call", name: "stubborn", arguments: { text: "b" } },
      ],
    });
    const { worker, persisted } = workerFor(double, { tools: toolServer(polite, stubborn) });
    const controller = new AbortController();
    const running = worker.run("go", { signal: controller.signal });
    await waitFor(() => started === 1);
    controller.abort();

    const error = await running.catch((e: unknown) => e);

    expect(AbortedError.isInstance(error)).toBe(true);
    expect(sawAbort).toBe(true);
    expect(worker.lastRunInterrupted).toBe(true);
    expect(persisted.map((i) => i.type)).toEqual(["message", "tool_call", "tool_call"]);

    double.enqueue({ parts: [{ type: "text", text: "recovered" }] });
    const result = await worker.run("again");

    expect(result.text).toBe("recovered");
    const results = VIEWS["openai-chat"].toolResults(bodies(double)[1]);
    expect(results.map((r) => r.text)).toEqual([
      DEFAULT_INTERRUPTED_TOOL_SUMMARY,
      DEFAULT_INTERRUPTED_TOOL_SUMMARY,
    ]);
    expect(persisted.slice(3).map((i) => i.type)).toEqual([
      "tool_result",
      "tool_result",
      "message",
      "message",
    ]);
  });

  it("an already-aborted signal stops the run before anything is committed or sent", async () => {
    const double = await startDouble("google");
    const { worker, persisted } = workerFor(double);
    const error = await worker.run("x", { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(persisted).toEqual([]);
    expect(double.requests).toHaveLength(0);
  });

  it("a preRequest cancel stops the run with CancelledError before the request", async () => {
    const double = await startDouble("anthropic");
    const { worker } = workerFor(double, {
      interceptor: { preRequest: () => ({ action: "cancel", reason: "budget exhausted" }) },
    });
    const error = await worker.run("x").catch((e: unknown) => e);
    expect(CancelledError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("budget exhausted");
    expect(worker.lastRunInterrupted).toBe(true);
    expect(double.requests).toHaveLength(0);
  });

  it("a preToolCall pause ends the run paused; resume() first executes the unanswered calls, once", async () => {
    const double = await startDouble("openai-responses");
    const echo = recordingTool("echo");
    let pause = true;
    double.enqueue(
      { parts: [{ type: "tool_call", name: "echo", arguments: { text: "later" } }] },
      { parts: [{ type: "text", text: "resumed and done" }] },
    );
    const { worker } = workerFor(double, {
      tools: toolServer(echo.tool),
      interceptor: { preToolCall: () => (pause ? { action: "pause" } : { action: "continue" }) },
    });

    const paused = await worker.run("go");
    expect(paused.status).toBe("paused");
    expect(worker.lastRunInterrupted).toBe(true);
    expect(echo.calls).toEqual([]);

    pause = false;
    const resumed = await worker.resume();

    expect(resumed).toMatchObject({ status: "finished", text: "resumed and done" });
    expect([...echo.executions.values()]).toEqual([1]);
    expect(VIEWS["openai-responses"].toolResults(bodies(double)[1])).toHaveLength(1);
    expect(worker.lastRunInterrupted).toBe(false);
  });

  it("await_approval asks about every call of the batch, runs none, and ends awaiting_approval; resume() runs them once", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_a", name: "echo", arguments: { text: "a" } },
          { type: "tool_call", id: "toolu_b", name: "echo", arguments: { text: "b" } },
          { type: "tool_call", id: "toolu_c", name: "echo", arguments: { text: "c" } },
        ],
      },
      { parts: [{ type: "text", text: "saw all three" }] },
    );
    const asked: string[] = [];
    const waiting = new Set(["toolu_a", "toolu_c"]);
    const { worker } = workerFor(double, {
      tools: toolServer(echo.tool),
      interceptor: {
        preToolCall: (call) => {
          asked.push(call.call_id);
          return waiting.has(call.call_id) ? { action: "await_approval" } : { action: "continue" };
        },
      },
    });

    const first = await worker.run("go");
    expect(first.status).toBe("awaiting_approval");
    expect(asked).toEqual(["toolu_a", "toolu_b", "toolu_c"]);
    expect(echo.calls).toEqual([]);
    expect(worker.lastRunInterrupted).toBe(true);

    waiting.delete("toolu_a");
    expect((await worker.resume()).status).toBe("awaiting_approval");
    expect(echo.calls).toEqual([]);

    waiting.clear();
    expect(await worker.resume()).toMatchObject({ status: "finished", text: "saw all three" });
    expect([...echo.executions.entries()].sort()).toEqual([
      ["toolu_a", 1],
      ["toolu_b", 1],
      ["toolu_c", 1],
    ]);
    expect(double.requests).toHaveLength(2);
  });

  it("a tool answering awaiting_approval leaves its call without a result: the batch's other results are committed, the run ends awaiting_approval, and resume() runs only that call again", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    let delegateRuns = 0;
    let waits = true;
    const delegate: Tool<{ text: string }> = {
      name: "delegate",
      description: "Waits on an approval made elsewhere (a sub-pod's).",
      inputSchema: z.object({ text: z.string() }),
      execute: (args) => {
        delegateRuns += 1;
        return waits
          ? { summary: "waiting on the child", awaiting_approval: true }
          : { summary: `done ${args.text}` };
      },
    };
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_echo", name: "echo", arguments: { text: "now" } },
          { type: "tool_call", id: "toolu_child", name: "delegate", arguments: { text: "later" } },
        ],
      },
      { parts: [{ type: "text", text: "both answered" }] },
    );
    const { worker, persisted } = workerFor(double, { tools: toolServer(echo.tool, delegate) });

    const first = await worker.run("go");
    expect(first.status).toBe("awaiting_approval");
    expect(worker.lastRunInterrupted).toBe(true);
    const results = () =>
      persisted
        .filter((item) => item.type === "tool_result")
        .map((item) => (item as { call_id: string }).call_id);
    expect(results()).toEqual(["toolu_echo"]);
    expect(double.requests).toHaveLength(1);

    // Still waiting: resume runs the suspended call alone, and stops again without a request.
    expect((await worker.resume()).status).toBe("awaiting_approval");
    expect(echo.executions.get("toolu_echo")).toBe(1);
    expect(double.requests).toHaveLength(1);

    waits = false;
    expect(await worker.resume()).toMatchObject({ status: "finished", text: "both answered" });
    expect(results()).toEqual(["toolu_echo", "toolu_child"]);
    expect(echo.executions.get("toolu_echo")).toBe(1);
    expect(delegateRuns).toBe(3);
    expect(double.requests).toHaveLength(2);
  });

  it("a postToolCall abort keeps the results of the tools that already ran, then stops the run", async () => {
    const double = await startDouble("anthropic");
    const write = recordingTool("write");
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_a", name: "write", arguments: { text: "a" } },
          { type: "tool_call", id: "toolu_b", name: "write", arguments: { text: "b" } },
        ],
      },
      { parts: [{ type: "text", text: "saw both results" }] },
    );
    const { worker, persisted } = workerFor(double, {
      tools: toolServer(write.tool),
      interceptor: {
        postToolCall: (call) =>
          call.call_id === "toolu_a" ? { action: "abort", reason: "policy" } : { action: "continue" },
      },
    });

    const error = await worker.run("write both").catch((e: unknown) => e);

    expect(CancelledError.isInstance(error)).toBe(true);
    // Both tools ran (their effects happened), so both results are history, not "interrupted" notes.
    expect(write.calls.sort()).toEqual(["a", "b"]);
    const results = persisted.filter((item) => item.type === "tool_result");
    expect(results).toEqual([
      { type: "tool_result", call_id: "toolu_a", summary: "write: a" },
      { type: "tool_result", call_id: "toolu_b", summary: "write: b" },
    ]);
    await worker.run("continue");
    expect(VIEWS.anthropic.toolResults(bodies(double)[1]).map((r) => r.text)).toEqual([
      "write: a",
      "write: b",
    ]);
  });

  it("setConfig, like setHistory, is refused while a run is in progress", async () => {
    const double = await startDouble("anthropic");
    const slow = recordingTool("slow", { delayMs: 100 });
    double.enqueue(
      { parts: [{ type: "tool_call", name: "slow", arguments: { text: "x" } }] },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker } = workerFor(double, { tools: toolServer(slow.tool), config: { max_tokens: 100 } });

    const running = worker.run("go");
    await waitFor(() => slow.calls.length === 1);
    const refused = (() => {
      try {
        worker.setConfig({ max_tokens: 5 });
      } catch (error) {
        return error;
      }
    })();
    await running;

    expect(WorkerBusyError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/^setConfig\(\) is not allowed while a run is in progress/);
    expect(bodies(double).map((body) => body.max_tokens)).toEqual([100, 100]);
    worker.setConfig({ max_tokens: 5 });
    expect(worker.config).toEqual({ max_tokens: 5 });
  });
});
