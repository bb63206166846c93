import assert from "node:assert/strict";
import { RunCancelledError, RunStateError, UnknownRunError } from "../errors.js";
import type { CaseContext } from "./harness.js";
import { aborted, claimFromAny, claimNow, claimWithin, job, runIdOf } from "./helpers.js";

/** Submit, show, list, idempotency, pods, per-session order, completion, cancellation, approvals. */
export function runCases({ it }: CaseContext): void {
  it("shows a submitted run as queued with its ids and input offset; lists newest first", async ({
    dispatcher,
  }) => {
    const first = job();
    const second = job({ pod: "other" });
    const outcome = await dispatcher.submit(first, { maxAttempts: 3 });
    assert.equal(outcome.created, true);
    await dispatcher.submit(second);
    const shown = await dispatcher.show(first.runId);
    assert.ok(shown);
    assert.deepEqual(
      {
        runId: shown.runId,
        pod: shown.pod,
        sessionId: shown.sessionId,
        input: shown.input,
        state: shown.state,
      },
      { ...first, input: { ...first.input }, state: "queued" },
    );
    assert.equal(shown.attempts, 0);
    assert.equal(shown.maxAttempts, 3);
    assert.ok(shown.submittedAt instanceof Date);
    assert.deepEqual(
      (await dispatcher.list()).map((run) => run.runId),
      [second.runId, first.runId],
    );
    assert.deepEqual(
      (await dispatcher.list({ pod: "other" })).map((run) => run.runId),
      [second.runId],
    );
    assert.deepEqual(
      (await dispatcher.list({ sessionId: first.sessionId, states: ["queued"] })).map((run) => run.runId),
      [first.runId],
    );
    assert.equal(await dispatcher.show(job().runId), undefined);
    assert.equal(await dispatcher.cancel(job().runId), undefined);
  });

  it("enqueues a run id once: a duplicate submit creates nothing and the run is claimed once", async (harness) => {
    const run = job();
    const other = await harness.connect();
    const outcomes = await Promise.all([harness.dispatcher.submit(run), other.submit(run)]);
    assert.deepEqual(outcomes.map((o) => o.created).sort(), [false, true]);
    const claim = await claimNow(harness.dispatcher);
    assert.equal(runIdOf(claim), run.runId);
    await claim.complete({ state: "completed", result: "finished" });
    assert.equal((await harness.dispatcher.submit(run)).created, false);
    assert.equal(await claimWithin(other, 1_500), undefined);
    const shown = await other.show(run.runId);
    assert.equal(shown?.state, "completed");
    assert.equal(shown?.result, "finished");
    assert.equal(shown?.attempts, 1);
  });

  it("leases a run to one worker; a second gets nothing while it is held", async (harness) => {
    const run = job();
    await harness.dispatcher.submit(run);
    const other = await harness.connect();
    const [a, b] = await Promise.all([claimWithin(harness.dispatcher, 3_000), claimWithin(other, 3_000)]);
    const claims = [a, b].filter((claim) => claim !== undefined);
    assert.equal(claims.length, 1);
    const claim = claims[0] as NonNullable<typeof a>;
    assert.equal(claim.attempt, 1);
    assert.equal(await claim.renew(), true);
    assert.equal((await harness.dispatcher.show(run.runId))?.state, "running");
    await claim.complete({ state: "completed", result: "limit_reached" });
    const shown = await harness.dispatcher.show(run.runId);
    assert.equal(shown?.state, "completed");
    assert.equal(shown?.result, "limit_reached");
    assert.equal(shown !== undefined && "output" in shown, false);
    assert.ok(shown?.endedAt instanceof Date);
  });

  it("keeps a completed run's typed answer as its result: show and list return the same object", async (harness) => {
    const run = job();
    await harness.dispatcher.submit(run);
    const claim = await claimNow(harness.dispatcher);
    const output = { verdict: "approve", findings: [{ line: 3, note: 'ünïcode "quoted"' }], score: 0.5 };
    await claim.complete({ state: "completed", result: "finished", output });
    const other = await harness.connect();
    const shown = await other.show(run.runId);
    assert.equal(shown?.state, "completed");
    assert.equal(shown?.result, "finished");
    assert.deepEqual(shown?.output, output);
    const [listed] = await other.list({ sessionId: run.sessionId });
    assert.deepEqual(listed?.output, output);
  });

  it("serves only the pods a worker asks for", async ({ dispatcher }) => {
    const run = job({ pod: "writer" });
    await dispatcher.submit(run);
    assert.equal(await claimWithin(dispatcher, 1_000, ["reviewer"]), undefined);
    const claim = await claimNow(dispatcher, 10_000, ["reviewer", "writer"]);
    assert.equal(runIdOf(claim), run.runId);
    await claim.complete({ state: "completed", result: "finished" });
  });

  it("claims the runs of one session one at a time, in submission order", async (harness) => {
    const first = job();
    const second = job({ sessionId: first.sessionId });
    const elsewhere = job();
    for (const run of [first, second, elsewhere]) await harness.dispatcher.submit(run);
    const a = await claimNow(harness.dispatcher);
    assert.equal(runIdOf(a), first.runId);
    const other = await harness.connect();
    const b = await claimNow(other);
    assert.equal(runIdOf(b), elsewhere.runId, "the second run of the session waits for the first");
    assert.equal(await claimWithin(other, 1_500), undefined);
    await a.complete({ state: "completed", result: "finished" });
    const c = await claimFromAny([harness.dispatcher, other]);
    assert.equal(runIdOf(c), second.runId);
    await Promise.all([b, c].map((claim) => claim.complete({ state: "completed", result: "finished" })));
  });

  it("cancels a queued run before it starts and a running one on the machine that holds it", async (harness) => {
    const queued = job();
    const running = job();
    await harness.dispatcher.submit(running);
    const claim = await claimNow(harness.dispatcher);
    await harness.dispatcher.submit(queued);
    assert.equal((await harness.dispatcher.cancel(queued.runId))?.state, "cancelled");
    const other = await harness.connect();
    const cancelledAt = Date.now();
    assert.equal((await other.cancel(running.runId))?.state, "cancelled");
    await aborted(claim.signal, 2_000);
    assert.ok(Date.now() - cancelledAt < 2_000, "the holder learns of the cancellation within 2 s");
    assert.ok(RunCancelledError.isInstance(claim.signal.reason));
    assert.equal(claim.leaseLost.aborted, false, "a cancelled run's holder may still close its turn");
    await claim.complete({ state: "completed", result: "finished" });
    assert.equal((await other.show(running.runId))?.state, "cancelled");
    assert.equal(await claimWithin(other, 1_000), undefined);
  });

  it("frees the worker of a run awaiting approval and continues it under the same id when requeued", async ({
    dispatcher,
  }) => {
    const run = job();
    await dispatcher.submit(run);
    const first = await claimNow(dispatcher);
    await first.complete({ state: "awaiting_approval" });
    const waiting = await dispatcher.show(run.runId);
    assert.equal(waiting?.state, "awaiting_approval");
    assert.equal(await claimWithin(dispatcher, 1_000), undefined);
    // Queued again; an engine that fetches ahead (pg-boss) may already hold it for the next claim.
    assert.ok(["queued", "running"].includes((await dispatcher.requeue(run.runId)).state));
    const second = await claimNow(dispatcher);
    assert.equal(runIdOf(second), run.runId);
    await second.complete({ state: "completed", result: "finished" });
    await assert.rejects(dispatcher.requeue(run.runId), (error) => RunStateError.isInstance(error));
    await assert.rejects(dispatcher.requeue(job().runId), (error) => UnknownRunError.isInstance(error));
  });

  it("two answers to a run awaiting approval at once requeue it once: the other is refused", async ({
    dispatcher,
  }) => {
    for (let round = 0; round < 5; round++) {
      const run = job();
      await dispatcher.submit(run);
      await (await claimNow(dispatcher)).complete({ state: "awaiting_approval" });
      const settled = await Promise.allSettled([
        dispatcher.requeue(run.runId),
        dispatcher.requeue(run.runId),
      ]);
      const refused = settled.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason] : []));
      assert.equal(
        refused.length,
        1,
        `round ${round}: ${settled.map((outcome) => outcome.status).join(", ")}`,
      );
      assert.ok(RunStateError.isInstance(refused[0]), `round ${round}: ${String(refused[0])}`);
      const again = await claimNow(dispatcher);
      assert.equal(runIdOf(again), run.runId);
      await again.complete({ state: "completed", result: "finished" });
    }
  });

  it("an answer and a cancel at once: the run ends cancelled and is not claimed again", async ({
    dispatcher,
  }) => {
    for (let round = 0; round < 5; round++) {
      const run = job();
      await dispatcher.submit(run);
      await (await claimNow(dispatcher)).complete({ state: "awaiting_approval" });
      const [requeued] = await Promise.allSettled([
        dispatcher.requeue(run.runId),
        dispatcher.cancel(run.runId),
      ]);
      if (requeued.status === "rejected")
        assert.ok(RunStateError.isInstance(requeued.reason), String(requeued.reason));
      assert.equal((await dispatcher.show(run.runId))?.state, "cancelled", `round ${round}`);
    }
    assert.equal(await claimWithin(dispatcher, 1_000), undefined);
  });

  it("cancels a run awaiting approval: it is never requeued nor claimed again", async ({ dispatcher }) => {
    const run = job();
    await dispatcher.submit(run);
    await (await claimNow(dispatcher)).complete({ state: "awaiting_approval" });
    assert.equal((await dispatcher.show(run.runId))?.state, "awaiting_approval");
    const cancelled = await dispatcher.cancel(run.runId);
    assert.equal(cancelled?.state, "cancelled");
    assert.equal((await dispatcher.show(run.runId))?.state, "cancelled");
    await assert.rejects(dispatcher.requeue(run.runId), (error) => RunStateError.isInstance(error));
    assert.equal(await claimWithin(dispatcher, 1_000), undefined);
    // Cancelling again changes nothing.
    assert.equal((await dispatcher.cancel(run.runId))?.state, "cancelled");
  });
}
