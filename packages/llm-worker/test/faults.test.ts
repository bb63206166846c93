// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import type { Wire } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { MalformedResponseError, ProviderError, type RetryPolicy } from "../src/index.js";
import { bodies, FAST_RETRY, recordingTool, startDouble, toolServer, WIRES, workerFor } from "./helpers.js";
import { VIEWS } from "./wire-views.js";

/** Records the delays the worker asks for instead of waiting them out. */
function recordedSleep(): { delays: number[]; retry: Partial<RetryPolicy> } {
  const delays: number[] = [];
  return {
    delays,
    retry: {
      ...FAST_RETRY,
      sleep: async (ms) => {
        delays.push(ms);
      },
    },
  };
}

describe("retry before the first event", () => {
  it("waits the Retry-After seconds of a 429, then succeeds", async () => {
    const double = await startDouble("anthropic");
    double.enqueue(
      { fault: { kind: "status", status: 429, retryAfter: 2 } },
      { parts: [{ type: "text", text: "after the wait" }] },
    );
    const { delays, retry } = recordedSleep();
    const { worker, events } = workerFor(double, { retry });

    const result = await worker.run("hi");

    expect(result.text).toBe("after the wait");
    expect(double.requests).toHaveLength(2);
    expect(delays).toEqual([2000]);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(double.requests[1]?.rawBody).toBe(double.requests[0]?.rawBody);
  });

  it("honours Retry-After given as an HTTP date, measured on the injected clock", async () => {
    const double = await startDouble("openai-responses");
    const now = Date.parse("2030-01-01T00:00:00Z");
    double.enqueue(
      { fault: { kind: "status", status: 503, retryAfter: new Date(now + 7000).toUTCString() } },
      { parts: [{ type: "text", text: "ok" }] },
    );
    const { delays, retry } = recordedSleep();
    const { worker } = workerFor(double, { retry: { ...retry, clock: { now: () => now } } });

    await worker.run("hi");

    expect(delays).toEqual([7000]);
  });

  it("uses full-jitter backoff from the injected random source when there is no Retry-After", async () => {
    const double = await startDouble("openai-chat");
    double.enqueue(
      { fault: { kind: "status", status: 502 } },
      { fault: { kind: "status", status: 529 } },
      { parts: [{ type: "text", text: "ok" }] },
    );
    const { delays, retry } = recordedSleep();
    const { worker } = workerFor(double, {
      retry: { ...retry, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.5 },
    });

    await worker.run("hi");

    expect(delays).toEqual([50, 100]);
  });

  it("gives up after maxAttempts 500s with a ProviderError carrying status and retryability", async () => {
    const double = await startDouble("google");
    for (let i = 0; i < 3; i++) double.enqueue({ fault: { kind: "status", status: 500 } });
    const { retry } = recordedSleep();
    const { worker, persisted } = workerFor(double, { retry: { ...retry, maxAttempts: 3 } });

    const error = await worker.run("hi").catch((e: unknown) => e);

    expect(ProviderError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      name: "ProviderError",
      status: 500,
      isRetryable: true,
      kind: "http",
      attempts: 3,
    });
    expect(double.requests).toHaveLength(3);
    expect(persisted.map((i) => i.type)).toEqual(["message"]);
    expect(worker.lastRunInterrupted).toBe(true);
  });

  it("does not retry a 400 and reports it as not retryable", async () => {
    const double = await startDouble("anthropic");
    double.enqueue({ fault: { kind: "status", status: 400 } }, { parts: [{ type: "text", text: "unused" }] });
    const { worker } = workerFor(double, { retry: recordedSleep().retry });

    const error = await worker.run("hi").catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "ProviderError", status: 400, isRetryable: false });
    expect(double.requests).toHaveLength(1);
  });

  it("stops retrying when the next wait would exceed the total budget", async () => {
    const double = await startDouble("anthropic");
    double.enqueue({ fault: { kind: "status", status: 429, retryAfter: 60 } });
    const { delays, retry } = recordedSleep();
    const { worker } = workerFor(double, { retry: { ...retry, totalBudgetMs: 30_000 } });

    const error = await worker.run("hi").catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "ProviderError", status: 429, isRetryable: true });
    expect(delays).toEqual([]);
    expect(double.requests).toHaveLength(1);
  });

  it.each(WIRES)("%s: a stall before the first event is abandoned and retried", async (wire: Wire) => {
    const double = await startDouble(wire);
    double.enqueue(
      { parts: [{ type: "text", text: "never sent" }], fault: { kind: "stall", afterEvents: 0, ms: 60_000 } },
      { parts: [{ type: "text", text: "second try" }] },
    );
    // The timeout also covers the retry, whose first event must come within it even on a busy
    // machine: long enough for that, far shorter than the stall.
    const { worker, events } = workerFor(double, { retry: { ...FAST_RETRY, firstEventTimeoutMs: 2_000 } });

    const result = await worker.run("hi");

    expect(result.text).toBe("second try");
    expect(double.requests).toHaveLength(2);
    const retry = events.find((e) => e.type === "retry");
    expect(retry).toMatchObject({ error: { kind: "timeout" } });
  });
});

describe("broken and malformed streams", () => {
  it.each(WIRES)(
    "%s: a reset after text began is continued, keeping the text exactly once",
    async (wire: Wire) => {
      const double = await startDouble(wire);
      const full = "The first part of an answer that is long.";
      double.enqueue(
        { parts: [{ type: "text", text: full, chunkSize: 3 }], fault: { kind: "reset", afterEvents: 6 } },
        { parts: [{ type: "text", text: " And the rest." }] },
      );
      const { worker, persisted, events } = workerFor(double);

      const result = await worker.run("Tell me.");

      expect(result.status).toBe("finished");
      const assistant = persisted.filter((i) => i.type === "message" && i.role === "assistant") as any[];
      expect(assistant).toHaveLength(2);
      const kept = assistant[0].content.map((p: any) => p.text).join("");
      expect(kept.length).toBeGreaterThan(0);
      expect(full.startsWith(kept)).toBe(true);
      expect(kept).not.toBe(full);
      expect(assistant[1].content[0].text).toBe(" And the rest.");
      expect(events.filter((e) => e.type === "continuation")).toHaveLength(1);
      const continuation = bodies(double)[1];
      const echoed = VIEWS[wire].assistantTexts(continuation).join("");
      expect(echoed.trim()).toBe(kept.trim());
      expect(JSON.stringify(continuation).split(kept.trim()).length - 1).toBe(1);
    },
  );

  it("a stream that stalls after text began is abandoned at the idle timeout and continued", async () => {
    const double = await startDouble("openai-responses");
    double.enqueue(
      {
        parts: [{ type: "text", text: "Stalling answer here", chunkSize: 4 }],
        fault: { kind: "stall", afterEvents: 5, ms: 60_000 },
      },
      { parts: [{ type: "text", text: " resumed." }] },
    );
    // Every gap between events, the continuation's too, must stay under the idle timeout even on a
    // busy machine: long enough for that, far shorter than the stall.
    const { worker, persisted, events } = workerFor(double, {
      retry: { ...FAST_RETRY, idleTimeoutMs: 2_000 },
    });

    const result = await worker.run("go");

    expect(result.text).toBe(" resumed.");
    expect(events.find((e) => e.type === "continuation")).toMatchObject({ error: { kind: "timeout" } });
    const kept = (persisted[1] as any).content[0].text as string;
    expect("Stalling answer here".startsWith(kept) && kept.length > 0).toBe(true);
    expect(double.requests).toHaveLength(2);
  });

  it("gives up after maxContinuations broken streams with a ProviderError", async () => {
    const double = await startDouble("anthropic");
    for (let i = 0; i < 3; i++) {
      double.enqueue({
        parts: [{ type: "text", text: "abcdefghij", chunkSize: 1 }],
        fault: { kind: "reset", afterEvents: 4 },
      });
    }
    const { worker } = workerFor(double, { retry: { ...FAST_RETRY, maxContinuations: 2 } });

    const error = await worker.run("hi").catch((e: unknown) => e);

    expect(error).toMatchObject({ name: "ProviderError", kind: "continuation" });
    expect(double.requests).toHaveLength(3);
  });

  it.each(WIRES)("%s: a malformed frame fails with a clear error and is not retried", async (wire: Wire) => {
    const double = await startDouble(wire);
    double.enqueue(
      {
        parts: [{ type: "text", text: "hello there", chunkSize: 2 }],
        fault: { kind: "malformed", afterEvents: 3 },
      },
      { parts: [{ type: "text", text: "unused" }] },
    );
    const { worker, persisted } = workerFor(double);

    const error = await worker.run("hi").catch((e: unknown) => e);

    expect(MalformedResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ kind: "malformed", isRetryable: false });
    expect((error as Error).message).toMatch(
      /could not read \(a stream frame that is not the expected JSON\)/,
    );
    expect(double.requests).toHaveLength(1);
    expect(persisted.map((i) => i.type)).toEqual(["message"]);
  });
});

describe("a tool never runs twice", () => {
  it.each(WIRES)("%s: across a retry, a continuation and a rate limit", async (wire: Wire) => {
    const double = await startDouble(wire);
    const echo = recordingTool("echo");
    double.enqueue(
      { fault: { kind: "status", status: 500 } },
      { parts: [{ type: "tool_call", name: "echo", arguments: { text: "once" } }] },
      {
        parts: [{ type: "text", text: "Working on the answer now.", chunkSize: 2 }],
        fault: { kind: "reset", afterEvents: 6 },
      },
      { fault: { kind: "status", status: 429, retryAfter: 0 } },
      { parts: [{ type: "text", text: "final" }] },
    );
    const { worker } = workerFor(double, { tools: toolServer(echo.tool) });

    const result = await worker.run("go");

    expect(result.text).toBe("final");
    expect(double.requests).toHaveLength(5);
    expect([...echo.executions.values()]).toEqual([1]);
    const [callId] = [...echo.executions.keys()];
    for (const body of bodies(double).slice(2)) {
      expect(VIEWS[wire].toolResults(body)).toEqual([{ id: callId, text: "echo: once" }]);
    }
  });

  it("anthropic: a break after one complete tool call keeps it, drops the partial one, runs it once", async () => {
    const double = await startDouble("anthropic");
    const echo = recordingTool("echo");
    double.enqueue(
      {
        parts: [
          { type: "tool_call", id: "toolu_complete", name: "echo", arguments: { text: "a" } },
          { type: "tool_call", id: "toolu_partial", name: "echo", arguments: { text: "b" }, chunkSize: 3 },
        ],
        fault: { kind: "reset", afterEvents: 9 },
      },
      { parts: [{ type: "text", text: "done" }] },
    );
    const { worker, persisted } = workerFor(double, { tools: toolServer(echo.tool) });

    await worker.run("go");

    expect(echo.calls).toEqual(["a"]);
    expect(persisted.filter((i) => i.type === "tool_call").map((i: any) => i.call_id)).toEqual([
      "toolu_complete",
    ]);
    expect(VIEWS.anthropic.toolResults(bodies(double)[1])).toEqual([
      { id: "toolu_complete", text: "echo: a" },
    ]);
  });
});
