import type { ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { databaseUrl } from "../../store-postgres/test/helpers/database.js";
import { loseLease } from "./helpers/lose-lease.js";
import { usePgWorlds } from "./helpers/world.js";

// pg-boss holds a local slot per job until the handler's promise for it settles: a worker whose
// claim is never settled never claims again. These tests show one worker (concurrency 1) going on
// after a cancel and after a lost lease, and how long a retried run waits in each case.

const worlds = usePgWorlds();

/** The model: answers stall (until the run is stopped) while `stalling()` says so, else "done". */
function stallWhile(stalling: () => boolean) {
  return (): ScriptedResponse =>
    stalling()
      ? { parts: [{ type: "text", text: "slow" }], fault: { kind: "stall", afterEvents: 0, ms: 120_000 } }
      : { parts: [{ type: "text", text: "done" }] };
}

describe("a worker with one slot claims again", () => {
  it("after `runs cancel` of its running run: it settles the claim and finishes the next run", {
    timeout: 120_000,
  }, async () => {
    let stall = true;
    const w = await worlds({ double: { respond: stallWhile(() => stall) } });
    const { run: cancelled } = await w.submit("stalls until cancelled");
    w.worker();
    const { dispatcher } = w.connect();
    for (let i = 0; i < 300 && w.double.requests.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(w.double.requests).toHaveLength(1);
    stall = false;
    const { run: next } = await w.submit("then this one");
    await dispatcher.cancel(cancelled.runId);
    const done = await w.settled(next.runId);
    expect(done.state).toBe("completed");
    expect((await dispatcher.show(cancelled.runId))?.state).toBe("cancelled");
    expect(w.events.filter((e) => e.type === "ended").map((e) => [e.runId, e.state])).toEqual([
      [cancelled.runId, "cancelled"],
      [next.runId, "completed"],
    ]);
  });

  it("after a lost lease: it stops writing, settles, takes the lost run over at once, then the next run", {
    timeout: 120_000,
  }, async () => {
    let stall = true;
    const w = await worlds({ double: { respond: stallWhile(() => stall) } });
    const { run: lost } = await w.submit("stalls until its lease is lost", 5);
    w.worker();
    for (let i = 0; i < 300 && w.double.requests.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    stall = false;
    const { run: next } = await w.submit("then this one");
    await loseLease(databaseUrl(), w.dispatchSchema, "reviewer", lost.runId);
    const first = await w.settled(lost.runId);
    expect(first).toMatchObject({ state: "completed", attempts: 2 });
    expect((await w.settled(next.runId)).state).toBe("completed");
    expect(w.events).toContainEqual({ type: "lease_lost", runId: lost.runId });
    const claimed = w.events.flatMap((e) => (e.type === "claimed" ? [[e.runId, e.attempt]] : []));
    // The run taken over goes before the run submitted after it.
    expect(claimed).toEqual([
      [lost.runId, 1],
      [lost.runId, 2],
      [next.runId, 1],
    ]);
  });
});

describe("how long a retried run waits", () => {
  it("an attempt that failed waits out its backoff; a run whose lease lapsed is claimable at once", {
    timeout: 120_000,
  }, async () => {
    const w = await worlds();
    const { dispatcher } = w.connect(undefined, { retryDelaySeconds: 4 });
    const { run: failed } = await w.submit("fails once", 5);
    const claimNext = (ms: number) =>
      dispatcher.claim({ pods: ["reviewer"], signal: AbortSignal.timeout(ms) });
    const first = await claimNext(10_000);
    expect(first?.attempt).toBe(1);
    await first?.fail({ type: "ProviderError", message: "overloaded" }, { retry: true });
    expect(await claimNext(2_000), "a failed attempt's retry waits for its backoff (4–8 s)").toBeUndefined();
    const second = await claimNext(20_000);
    expect(second?.attempt).toBe(2);
    expect(second?.work).toMatchObject({ run: { runId: failed.runId } });
    await loseLease(databaseUrl(), w.dispatchSchema, "reviewer", failed.runId);
    const lostAt = Date.now();
    for (let i = 0; i < 100 && second?.leaseLost.aborted !== true; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(second?.leaseLost.aborted).toBe(true);
    // Settled by its holder (fenced to the lost attempt: nothing changes), the slot is free.
    await second?.fail({ type: "LeaseLostError", message: "the lease was lost" }, { retry: true });
    const third = await claimNext(2_000);
    expect(third?.attempt, "a lapsed lease is taken over without the backoff").toBe(3);
    expect(Date.now() - lostAt).toBeLessThan(4_000);
    await third?.complete({ state: "completed", result: "finished" });
  });
});
