import assert from "node:assert/strict";
import { RunCancelledError } from "../errors.js";
import type { CaseContext } from "./harness.js";
import { aborted, claimNow, job, runIdOf } from "./helpers.js";

/**
 * Leases and slots: what a holder sees of its lease, and that settling a claim — whatever happened
 * to its run — frees the worker's slot, so one worker (concurrency 1) goes on to the next run.
 */
export function slotCases({ it }: CaseContext): void {
  it("tells the holder when its lease was last confirmed and how long it holds; renewing confirms it again", async ({
    dispatcher,
  }) => {
    await dispatcher.submit(job());
    const before = Date.now();
    const claim = await claimNow(dispatcher);
    assert.ok(claim.leaseMs > 0, "a lease holds for some time");
    const first = claim.leaseConfirmedAt;
    assert.ok(first <= Date.now(), "confirmed no later than now");
    assert.ok(first + claim.leaseMs > Date.now(), "a fresh claim's lease holds now");
    // Claimed work may wait for its claimer a little; its confirmation is not older than the wait.
    assert.ok(first >= before - claim.leaseMs, "confirmed while the run was being claimed");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await claim.renew(), true);
    assert.ok(claim.leaseConfirmedAt > first, "a renewal confirms the lease again");
    await claim.complete({ state: "completed", result: "finished" });
  });

  it("claims again after cancel: the holder settles its cancelled claim and the same worker claims the next run", async (harness) => {
    const { dispatcher } = harness;
    const cancelled = job();
    const next = job();
    await dispatcher.submit(cancelled);
    const claim = await claimNow(dispatcher);
    await dispatcher.submit(next);
    const other = await harness.connect();
    await other.cancel(cancelled.runId);
    await aborted(claim.signal, 2_000);
    assert.ok(RunCancelledError.isInstance(claim.signal.reason));
    // How a holder settles a cancelled claim (after closing its turn): nothing is given back.
    await claim.release();
    const again = await claimNow(dispatcher, harness.leaseBoundMs);
    assert.equal(runIdOf(again), next.runId, "the worker's slot is free for the next run");
    await again.complete({ state: "completed", result: "finished" });
    assert.equal((await other.show(cancelled.runId))?.state, "cancelled");
    assert.equal((await other.show(next.runId))?.state, "completed");
  });

  it("claims again after a lost lease: the lost run goes first, at once, and the lost claim's settling counts nothing", async (harness) => {
    const { dispatcher } = harness;
    const lost = job();
    const next = job();
    await dispatcher.submit(lost, { maxAttempts: 3 });
    const claim = await claimNow(dispatcher);
    await dispatcher.submit(next);
    await harness.loseLease(dispatcher, claim);
    await aborted(claim.leaseLost, harness.leaseBoundMs);
    assert.ok(claim.signal.aborted, "a lost lease aborts the claim's signal too");
    const confirmed = claim.leaseConfirmedAt;
    assert.equal(await claim.renew(), false, "a lost lease cannot be renewed");
    assert.equal(claim.leaseConfirmedAt, confirmed, "nor is it confirmed again");
    // Fenced to the lost attempt: changes nothing in the engine, frees the slot.
    await claim.fail({ type: "LeaseLostError", message: "the lease was lost" }, { retry: true });
    const again = await claimNow(dispatcher, harness.leaseBoundMs);
    assert.equal(runIdOf(again), lost.runId, "a run taken over goes before runs submitted after it");
    assert.equal(again.attempt, 2, "the lost claim's settling counted no attempt");
    await again.complete({ state: "completed", result: "finished" });
    const after = await claimNow(dispatcher, harness.leaseBoundMs);
    assert.equal(runIdOf(after), next.runId);
    await after.complete({ state: "completed", result: "finished" });
    const shown = await dispatcher.show(lost.runId);
    assert.equal(shown?.state, "completed");
    assert.equal(shown?.attempts, 2);
  });
}
