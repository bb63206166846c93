import { readFile } from "node:fs/promises";
import type { Item } from "@podkit/llm-worker";
import { Pod } from "@podkit/pod";
import { type Entry, SessionLog } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { type Dispatcher, LeaseLostError, RUN_DOMAIN, submitRun } from "../src/index.js";
import { assertSessionSound, until, useWorlds, type World } from "./helpers/world.js";

// The writer fence of a worker: checked synchronously before every write and every tool start,
// against the time its lease was last confirmed; a drift under a lease means the lease is lost.

const world = useWorlds();

const text = (value: string) => ({ parts: [{ type: "text" as const, text: value }] });
const call = (name: string, id: string) => ({
  parts: [{ type: "tool_call" as const, name, arguments: {}, id }],
});

/** Submits `input` to a new session through `dispatcher`. */
function submitNew(w: World, dispatcher: Dispatcher, input: string) {
  return submitRun(dispatcher, w.store, {
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
    maxAttempts: 5,
  });
}

const runEvents = (entries: readonly Entry<Item>[]) =>
  entries.flatMap((e) =>
    e.kind === "extension" && e.domain === RUN_DOMAIN ? [(e.payload as { event: string }).event] : [],
  );

async function counted(w: World): Promise<string[]> {
  return (await readFile(w.counterFile, "utf8").catch(() => "")).split("\n").filter(Boolean);
}

describe("the lease fence of a worker", () => {
  it("a worker whose lease lapsed while it waited for the model writes nothing and starts no tool once the answer comes — before the engine has even noticed", async () => {
    const w = await world({ queue: { leaseMs: 300 } });
    // The answer (a tool call) arrives after three lease lengths.
    w.double.enqueue(
      { ...call("count", "call_late"), fault: { kind: "stall", afterEvents: 0, ms: 900 } },
      text("finished by the next worker"),
    );
    // One connection submits and then goes away: nothing but the workers' own heartbeats run.
    const submitter = w.queue.connect();
    const { run } = await submitNew(w, submitter, "count once");
    await submitter.close();
    const first = w.queue.connect();
    w.worker({ dispatcher: first });
    await until(() => (w.double.requests.length === 1 ? true : undefined));
    // Its process pauses renewing (as a frozen process would); nobody else runs a heartbeat, so the
    // engine does not take the lease away: only the clock says it has lapsed.
    first.crash();
    const failed = await until(() => w.events.find((e) => e.type === "lease_lost" && e.runId === run.runId));
    expect(failed).toBeDefined();
    const info = await w.queue.connect().show(run.runId);
    // The synchronous check stopped it, not a lost-lease signal (the engine never sent one).
    expect(info?.error).toMatchObject({
      type: "LeaseLostError",
      message: expect.stringContaining("last confirmed"),
    });

    // Positive control: nothing but the fence stood in the way — no other writer had touched the
    // segment, so the store's one-writer rule would have let the answer in.
    const before = await w.segments(run.sessionId);
    expect(before.size).toBe(1);
    const entries = [...before.values()][0] as Entry<Item>[];
    expect(entries.at(-1)).toMatchObject({ kind: "user_input" });
    expect(entries.some((e) => e.kind === "assistant_item")).toBe(false);
    expect(await counted(w)).toEqual([]);

    // The run goes on with the next worker, which closes the open turn as moved to another worker.
    w.worker();
    const done = await until(async () => {
      const shown = await w.queue.connect().show(run.runId);
      return shown?.state === "completed" ? shown : undefined;
    });
    expect(done.attempts).toBe(2);
    const after = await w.segments(run.sessionId);
    assertSessionSound(after);
    expect(after.size, "no fork").toBe(1);
    const log = [...after.values()][0] as Entry<Item>[];
    expect(runEvents(log)).toEqual(["submitted", "started", "started", "ended"]);
    const note = log.find((e) => e.kind === "system_item");
    expect(note).toMatchObject({
      item: { kind: "interrupt", body: expect.stringContaining("moved to another worker") },
    });
    expect(await counted(w), "the late tool call never started").toEqual([]);
  });

  it("under a lease, a drift means the lease is lost: the worker stops and never forks (an unfenced writer would)", async () => {
    const w = await world();
    w.double.enqueue(
      { ...call("count", "call_after_drift"), fault: { kind: "stall", afterEvents: 0, ms: 300 } },
      text("finished by the next attempt"),
    );
    const { run } = await submitNew(w, w.queue.connect(), "count once");
    w.worker();
    await until(() => (w.double.requests.length === 1 ? true : undefined));
    // Another writer appends to the session while the worker waits for the model (its lease is fine).
    const unfenced = await SessionLog.open(w.store, run.sessionId);
    const intruder = await SessionLog.open(w.store, run.sessionId);
    await intruder.append({ kind: "extension", domain: "test.intruder", payload: { n: 1 } });

    await until(() => w.events.find((e) => e.type === "lease_lost" && e.runId === run.runId));
    const done = await until(async () => {
      const shown = await w.queue.connect().show(run.runId);
      return shown?.state === "completed" ? shown : undefined;
    });
    expect(done).toMatchObject({ attempts: 2, error: { type: LeaseLostError.name } });
    expect(done.error?.message).toContain("another writer changed segment");
    const segments = await w.segments(run.sessionId);
    assertSessionSound(segments);
    expect(segments.size, "the worker forked nothing").toBe(1);
    const entries = [...segments.values()][0] as Entry<Item>[];
    expect(JSON.stringify(entries)).not.toContain("call_after_drift");
    expect(await counted(w), "the call that came after the drift never started").toEqual([]);

    // Positive control: an interactive writer that knew the old count forks on its next write.
    const control = await unfenced.append({ kind: "extension", domain: "test.unfenced", payload: {} });
    expect(control.driftFork).not.toBeNull();
  });

  it("settles the claim of a cancelled run, and the same worker (concurrency 1) claims and finishes the next run", async () => {
    const w = await world();
    w.double.enqueue(call("block", "call_block"), text("next done"));
    const dispatcher = w.queue.connect();
    const settled: string[] = [];
    // The worker's dispatcher, watched: every settle call on its claims is recorded.
    const watched: Dispatcher = Object.assign(Object.create(dispatcher) as Dispatcher, {
      claim: async (options: Parameters<Dispatcher["claim"]>[0]) => {
        const claim = await dispatcher.claim(options);
        if (claim === undefined) return claim;
        const id = claim.work.kind === "run" ? claim.work.run.runId : claim.work.firingId;
        const settles = <A extends unknown[]>(how: string, settle: (...args: A) => Promise<void>) => {
          return (...args: A) => {
            settled.push(`${id} ${how}`);
            return settle(...args);
          };
        };
        return Object.assign(Object.create(claim), {
          complete: settles("complete", claim.complete),
          fail: settles("fail", claim.fail),
          release: settles("release", claim.release),
        });
      },
    });
    const { run: cancelled } = await submitNew(w, w.queue.connect(), "block");
    w.worker({ dispatcher: watched, concurrency: 1 });
    await w.blockStarted();
    const { run: next } = await submitNew(w, w.queue.connect(), "then this");
    await w.queue.connect().cancel(cancelled.runId);
    await until(async () =>
      (await w.queue.connect().show(next.runId))?.state === "completed" ? true : undefined,
    );
    expect(settled).toEqual([`${cancelled.runId} release`, `${next.runId} complete`]);
    expect(w.events.filter((e) => e.type === "ended").map((e) => [e.runId, e.state])).toEqual([
      [cancelled.runId, "cancelled"],
      [next.runId, "completed"],
    ]);
  });
});
