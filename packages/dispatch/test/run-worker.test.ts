import { appendFile, readFile } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { RunCancelledError, SessionRunningError, submitRun } from "../src/index.js";
import { assertSessionSound, until, useWorlds, type World } from "./helpers/world.js";

const world = useWorlds();

const text = (value: string) => ({ parts: [{ type: "text" as const, text: value }] });
const call = (name: string, id?: string) => ({
  parts: [{ type: "tool_call" as const, name, arguments: {}, ...(id === undefined ? {} : { id }) }],
});

/** Submits `input` to a new session of the world's pod (rendered on the submitting side). */
async function submitNew(
  w: World,
  input: string,
  extra: { idempotencyKey?: string; maxAttempts?: number } = {},
) {
  const { Pod } = await import("@podkit/pod");
  return submitRun(w.queue.connect(), w.store, {
    pod: "reviewer",
    session: {
      create: async () => {
        const pod = await Pod.fromManifest(w.loaded, { ...w.podOptions(), store: w.store });
        try {
          return await pod.startSession();
        } finally {
          await pod.close();
        }
      },
    },
    input,
    ...extra,
  });
}

const stateOf = (w: World, runId: string) => async () => {
  const run = await w.queue.connect().show(runId);
  return run !== undefined && ["completed", "dead", "cancelled", "awaiting_approval"].includes(run.state)
    ? run
    : undefined;
};

const kinds = (entries: readonly { kind: string }[]) => entries.map((entry) => entry.kind);

/** `body` framed as line `seq` of a v2/v3 segment file (FsStore's `seq` and CRC-32 members). */
const framed = (body: string, seq: number) => {
  const covered = `${body.slice(0, -1)},"seq":${seq}`;
  return `${covered},"crc":"${crc32(covered).toString(16).padStart(8, "0")}"}`;
};

describe("a run submitted and run by a worker", () => {
  it("commits the input to the session before enqueueing; the worker restores it and records each step", async () => {
    const w = await world();
    w.double.enqueue(call("count"), text("reviewed"));
    const { run, created } = await submitNew(w, "Review the diff.");
    expect(created).toBe(true);
    const [before] = [...(await w.segments(run.sessionId)).values()];
    expect(kinds(before ?? [])).toEqual(["segment_start", "extension"]);
    expect(before?.[1]).toMatchObject({
      domain: "dispatch.run",
      payload: { run_id: run.runId, event: "submitted", input: "Review the diff." },
    });
    expect(run.input).toEqual({ segmentId: [...(await w.segments(run.sessionId)).keys()][0], index: 1 });
    w.worker();
    const done = await until(stateOf(w, run.runId));
    expect(done).toMatchObject({ state: "completed", result: "finished", attempts: 1 });
    const segments = await w.segments(run.sessionId);
    assertSessionSound(segments);
    const [entries] = [...segments.values()];
    expect(kinds(entries ?? [])).toEqual([
      "segment_start",
      "extension",
      "extension",
      "invoke",
      "user_input",
      "llm_usage",
      "assistant_item",
      "tool_result",
      "llm_usage",
      "assistant_item",
      "turn_end",
      "run_completed",
      "extension",
    ]);
    expect(entries?.[2]).toMatchObject({ payload: { event: "started", attempt: 1, resumes: false } });
    expect(entries?.at(-1)).toMatchObject({
      payload: { event: "ended", state: "completed", result: "finished" },
    });
    // The prompt rendered at submit is what the provider received, on every request.
    const prompt = (entries?.[0] as { system_prompt: string } | undefined)?.system_prompt;
    expect(prompt).toMatch(/^date=2026-04-15 tools=block,count,glob,/);
    for (const request of w.double.requests) expect(request.body.system[0].text).toBe(prompt);
    expect((await readFile(w.counterFile, "utf8")).trim().split("\n")).toHaveLength(1);
  });

  it("runs a duplicate submit with the same idempotency key once", async () => {
    const w = await world();
    w.double.enqueue(text("once"));
    const first = await submitNew(w, "hello", { idempotencyKey: "ticket-42" });
    const second = await submitNew(w, "hello", { idempotencyKey: "ticket-42" });
    expect(second).toMatchObject({ created: false, run: { runId: first.run.runId } });
    w.worker();
    await until(stateOf(w, first.run.runId));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(w.double.requests).toHaveLength(1);
    expect(await w.store.listSessions()).toEqual([first.run.sessionId]);
    expect(await w.queue.connect().list()).toHaveLength(1);
  });

  it("continues an existing session with a second run, and refuses a submit while a worker runs it", async () => {
    const w = await world();
    w.double.enqueue(text("first"));
    const first = await submitNew(w, "one");
    w.worker();
    await until(stateOf(w, first.run.runId));
    w.double.enqueue(call("block"));
    const second = await submitRun(w.queue.connect(), w.store, {
      pod: "reviewer",
      session: { id: first.run.sessionId },
      input: "two",
    });
    await w.blockStarted();
    const busy = await submitRun(w.queue.connect(), w.store, {
      pod: "reviewer",
      session: { id: first.run.sessionId },
      input: "three",
    }).catch((error: unknown) => error);
    expect(SessionRunningError.isInstance(busy)).toBe(true);
    expect((busy as SessionRunningError).runningRunId).toBe(second.run.runId);
    w.double.enqueue(text("unblocked"));
    await w.queue.connect().cancel(second.run.runId);
    const cancelled = await until(stateOf(w, second.run.runId));
    expect(cancelled.state).toBe("cancelled");
    assertSessionSound(await w.segments(first.run.sessionId));
  });
});

describe("failover, cancellation and failures", () => {
  it("a worker that stopped renewing loses the run; another resumes it, closing the in-flight call as interrupted", async () => {
    const w = await world({ queue: { leaseMs: 300 } });
    w.double.enqueue(call("count", "call_1"), call("block", "call_2"), text("finished elsewhere"));
    const { run } = await submitNew(w, "count then block");
    const stalled = w.worker();
    await w.blockStarted();
    // The worker's process "freezes": no more lease renewals.
    (stalled.worker as unknown as { options: { dispatcher: { crash(): void } } }).options.dispatcher.crash();
    w.worker();
    const done = await until(stateOf(w, run.runId));
    expect(done).toMatchObject({ state: "completed", attempts: 2 });
    expect(w.events).toContainEqual({ type: "lease_lost", runId: run.runId });
    const segments = await w.segments(run.sessionId);
    assertSessionSound(segments);
    expect(segments.size, "no second writer forked the session").toBe(1);
    const entries = [...segments.values()][0] ?? [];
    const started = entries.filter(
      (e) => e.kind === "extension" && (e.payload as { event: string }).event === "started",
    );
    expect(started.map((e) => (e as { payload: unknown }).payload)).toMatchObject([
      { attempt: 1, resumes: false },
      { attempt: 2, resumes: true },
    ]);
    const closed = entries.find(
      (e) => e.kind === "tool_result" && (e.item as { call_id: string }).call_id === "call_2",
    );
    expect(closed).toMatchObject({ item: { is_error: true } });
    // Each committed call ran once; the blocked one was closed, never run again.
    expect((await readFile(w.counterFile, "utf8")).trim().split("\n")).toEqual(["call_1"]);
    const prompts = new Set(w.double.requests.map((request) => request.body.system[0].text));
    expect(prompts.size).toBe(1);
  });

  it("cancels a running run on the worker that holds it within 2 s and records the end in the log", async () => {
    const w = await world();
    w.double.enqueue(call("block"));
    const { run } = await submitNew(w, "block");
    const claimedBy = w.queue.connect();
    w.worker({ dispatcher: claimedBy });
    await w.blockStarted();
    const at = Date.now();
    await w.queue.connect().cancel(run.runId);
    const ended = await until(() => w.events.find((e) => e.type === "ended" && e.runId === run.runId));
    expect(Date.now() - at).toBeLessThan(2_000);
    expect(ended).toMatchObject({ state: "cancelled" });
    const segments = await w.segments(run.sessionId);
    assertSessionSound(segments);
    const entries = [...segments.values()][0] ?? [];
    expect(entries.at(-1)).toMatchObject({ payload: { event: "ended", state: "cancelled" } });
    expect(RunCancelledError).toBeDefined();
  });

  it("dead-letters a run whose session is missing after one attempt, with the store's typed error", async () => {
    const w = await world();
    const { run } = await submitNew(w, "hello");
    const ghost = {
      ...run,
      runId: "0190e2c1-aaaa-7bbb-8ccc-000000000001",
      sessionId: "0190e2c1-aaaa-7bbb-8ccc-000000000002",
    };
    await w.queue.connect().submit(ghost, { maxAttempts: 5 });
    await w.queue.connect().cancel(run.runId);
    w.worker();
    const dead = await until(stateOf(w, ghost.runId));
    expect(dead).toMatchObject({ state: "dead", attempts: 1, error: { type: "NotFoundError" } });
    expect(dead.error?.message).toContain(ghost.sessionId);
  });

  it("retries a run whose session holds an entry kind from a newer podkit, recording UnsupportedFormatError; a corrupt one is dead-lettered", async () => {
    const w = await world({ queue: { retryDelayMs: 60_000 } });
    const plant = async (line: (seq: number) => string) => {
      const { run } = await submitNew(w, "hello", { maxAttempts: 5 });
      const [[segmentId, entries]] = [...(await w.segments(run.sessionId)).entries()] as [
        [string, unknown[]],
      ];
      await w.store.close(); // its lease on the segment, so the line goes in after its last entry
      const file = w.store.segmentPath({ sessionId: run.sessionId, segmentId });
      await appendFile(file, `${line(entries.length)}\n`);
      return run;
    };
    // An intact (framed) line of a kind this podkit does not know: written by a newer podkit.
    const future = await plant((seq) => framed('{"kind":"checkpoint","ts":1}', seq));
    // The same line with its checksum broken: damage.
    const damaged = await plant((seq) =>
      framed('{"kind":"checkpoint","ts":1}', seq).replace(/"crc":"./, '"crc":"x'),
    );
    w.worker();

    const retrying = await until(async () => {
      const run = await w.queue.connect().show(future.runId);
      return run?.state === "retrying" ? run : undefined;
    });
    expect(retrying).toMatchObject({ attempts: 1, error: { type: "UnsupportedFormatError" } });
    expect(retrying.error?.message).toMatch(
      /written by a newer podkit: entry kind "checkpoint" is not in format \d+/,
    );
    expect(w.events).toContainEqual({
      type: "failed",
      runId: future.runId,
      error: retrying.error,
      retry: true,
    });
    // Control: a corrupt log is still no retry's to fix.
    const dead = await until(stateOf(w, damaged.runId));
    expect(dead).toMatchObject({ state: "dead", attempts: 1, error: { type: "CorruptEntryError" } });
  });

  it("retries a pod that fails on every attempt a bounded number of times, then dead-letters it with the reason", async () => {
    // An overloaded provider: transient, so retried (each attempt's requests without a wait).
    const w = await world({
      double: {
        respond: () => ({
          fault: {
            kind: "status",
            status: 529,
            retryAfter: 0,
            body: '{"type":"error","error":{"type":"overloaded_error","message":"overloaded"}}',
          },
        }),
      },
    });
    const { run } = await submitNew(w, "hello", { maxAttempts: 3 });
    w.worker();
    const dead = await until(stateOf(w, run.runId), 20_000);
    expect(dead).toMatchObject({ state: "dead", attempts: 3, error: { type: "ProviderError" } });
    expect(dead.error?.message).toContain("overloaded");
    assertSessionSound(await w.segments(run.sessionId));
  });

  it("dead-letters at once a run the provider refuses as a bad request: the same request fails the same way", async () => {
    const w = await world({
      double: {
        respond: () => ({
          fault: {
            kind: "status",
            status: 400,
            body: '{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}',
          },
        }),
      },
    });
    const { run } = await submitNew(w, "hello", { maxAttempts: 3 });
    w.worker();
    const dead = await until(stateOf(w, run.runId), 20_000);
    expect(dead).toMatchObject({ state: "dead", attempts: 1, error: { type: "ProviderError" } });
    expect(dead.error?.message).toContain("bad request");
    expect(w.double.requests).toHaveLength(1);
    assertSessionSound(await w.segments(run.sessionId));
  });

  it("drains: the run in progress finishes, nothing new is claimed; stop hands a run back to be resumed", async () => {
    const w = await world();
    w.double.enqueue(call("block"));
    const first = await submitNew(w, "first");
    const a = w.worker();
    await w.blockStarted();
    const second = await submitNew(w, "second");
    a.worker.stop();
    await a.done;
    expect(w.events).toContainEqual({ type: "handed_back", runId: first.run.runId });
    expect((await w.queue.connect().show(second.run.runId))?.state).toBe("queued");
    w.double.enqueue(text("resumed"), text("second done"));
    const b = w.worker();
    await until(stateOf(w, first.run.runId));
    await until(stateOf(w, second.run.runId));
    b.worker.drain();
    await b.done;
    const entries = [...(await w.segments(first.run.sessionId)).values()][0] ?? [];
    expect(entries.filter((e) => e.kind === "user_input")).toHaveLength(1);
  });

  it("turns a schedule firing into an ordinary run of a new session; a retried firing runs once", async () => {
    const w = await world({
      manifestExtra: '[[schedule]]\nname = "nightly"\ncron = "0 3 * * *"\ninput = "Nightly check."',
    });
    w.double.enqueue(text("checked"));
    const a = w.worker();
    await until(() => (w.queue.scheduled.length === 1 ? true : undefined));
    expect(w.queue.scheduled).toEqual([{ pod: "reviewer", name: "nightly", cron: "0 3 * * *" }]);
    w.queue.fire("reviewer", "nightly");
    const fired = await until(() => w.events.find((e) => e.type === "fired"));
    if (fired.type !== "fired") throw new Error("unreachable");
    const done = await until(stateOf(w, fired.runId));
    expect(done.state).toBe("completed");
    const entries = [...(await w.segments(done.sessionId)).values()][0] ?? [];
    expect(entries[1]).toMatchObject({
      payload: { event: "submitted", input: "Nightly check.", schedule: "nightly" },
    });
    a.worker.drain();
  });
});

describe("a run awaiting approval", () => {
  it("frees its worker; answered from another process and requeued, it goes on under the same id and the call runs once", async () => {
    const w = await world();
    w.double.enqueue(call("count", "toolu_ask"), text("counted"));
    const { run } = await submitNew(w, "Count once, with a yes.");
    // A hook that asks about every `count` call: nobody can answer in the worker.
    w.worker({
      preparePod: (pod) => pod.addHooks({ preToolCall: () => ({ action: "ask", askedBy: "test" }) }),
    });
    expect(await until(stateOf(w, run.runId))).toMatchObject({ state: "awaiting_approval" });
    expect(await readFile(w.counterFile, "utf8").catch(() => "")).toBe("");

    // Requeued before the answer: it settles as waiting again and runs nothing.
    await w.queue.connect().requeue(run.runId);
    await until(async () => {
      const shown = await w.queue.connect().show(run.runId);
      return shown?.state === "awaiting_approval" && shown.attempts >= 2 ? shown : undefined;
    });
    expect(await readFile(w.counterFile, "utf8").catch(() => "")).toBe("");

    const { answerApproval } = await import("@podkit/session-store");
    await answerApproval(w.store, run.sessionId, "toolu_ask", { decision: "allow", by: "alice" });
    await w.queue.connect().requeue(run.runId);
    expect(await until(stateOf(w, run.runId))).toMatchObject({ state: "completed", result: "finished" });
    expect(await readFile(w.counterFile, "utf8")).toBe("toolu_ask\n");
    const segments = await w.segments(run.sessionId);
    assertSessionSound(segments);
    const entries = [...segments.values()].flat();
    expect(kinds(entries)).toContain("approval_answered");
    // The model saw the call's result.
    expect(JSON.stringify(w.double.requests.at(-1)?.body)).toContain("counted");
  });
});
