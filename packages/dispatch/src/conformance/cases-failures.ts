import assert from "node:assert/strict";
import type { CaseContext } from "./harness.js";
import { claimNow, claimWithin, job, runIdOf } from "./helpers.js";

/** Retries, dead-lettering, release, and the lease of a holder that died. */
export function failureCases({ it }: CaseContext): void {
  it("retries a failed attempt, then dead-letters the run with the reason after maxAttempts", async ({
    dispatcher,
  }) => {
    const run = job();
    await dispatcher.submit(run, { maxAttempts: 2 });
    const first = await claimNow(dispatcher);
    await first.fail({ type: "ProviderError", message: "overloaded" }, { retry: true });
    const retrying = await dispatcher.show(run.runId);
    assert.equal(retrying?.state, "retrying");
    assert.deepEqual(retrying?.error, { type: "ProviderError", message: "overloaded" });
    const second = await claimNow(dispatcher);
    assert.equal(second.attempt, 2);
    await second.fail({ type: "ProviderError", message: "overloaded again" }, { retry: true });
    const dead = await dispatcher.show(run.runId);
    assert.equal(dead?.state, "dead");
    assert.equal(dead?.attempts, 2);
    assert.deepEqual(dead?.error, { type: "ProviderError", message: "overloaded again" });
    assert.equal(await claimWithin(dispatcher, 1_000), undefined);
  });

  it("dead-letters at once a failure no retry can fix", async ({ dispatcher }) => {
    const run = job();
    await dispatcher.submit(run, { maxAttempts: 5 });
    const claim = await claimNow(dispatcher);
    await claim.fail({ type: "NotFoundError", message: "session x not found" }, { retry: false });
    const dead = await dispatcher.show(run.runId);
    assert.equal(dead?.state, "dead");
    assert.equal(dead?.attempts, 1);
    assert.deepEqual(dead?.error, { type: "NotFoundError", message: "session x not found" });
    assert.deepEqual(
      (await dispatcher.list({ states: ["dead"] })).map((r) => r.runId),
      [run.runId],
    );
    assert.equal(await claimWithin(dispatcher, 1_000), undefined);
  });

  it("makes a released run claimable again", async ({ dispatcher }) => {
    const run = job();
    await dispatcher.submit(run, { maxAttempts: 3 });
    const claim = await claimNow(dispatcher);
    await claim.release();
    const again = await claimNow(dispatcher);
    assert.equal(runIdOf(again), run.runId);
    await again.complete({ state: "completed", result: "finished" });
    assert.equal((await dispatcher.show(run.runId))?.state, "completed");
  });

  it("gives the run of a holder that died to another worker within the lease bound; the dead claim settles nothing", async (harness) => {
    const run = job();
    await harness.dispatcher.submit(run, { maxAttempts: 3 });
    const dying = await claimNow(harness.dispatcher);
    const survivor = await harness.connect();
    assert.equal(await claimWithin(survivor, 500), undefined, "held while its holder lives");
    await harness.crash(harness.dispatcher);
    const crashedAt = Date.now();
    const taken = await claimNow(survivor, harness.leaseBoundMs + 10_000);
    assert.ok(Date.now() - crashedAt <= harness.leaseBoundMs, "claimed again within the lease bound");
    assert.equal(runIdOf(taken), run.runId);
    assert.equal(taken.attempt, 2);
    await dying.complete({ state: "completed", result: "finished" }).catch(() => undefined);
    assert.equal((await survivor.show(run.runId))?.state, "running");
    await taken.complete({ state: "completed", result: "finished" });
    assert.equal((await survivor.show(run.runId))?.state, "completed");
  });

  it("gives the run of a holder that died to the next busy worker that frees a slot, before runs submitted after it", async (harness) => {
    const run = job();
    await harness.dispatcher.submit(run, { maxAttempts: 3 });
    await claimNow(harness.dispatcher);
    const survivor = await harness.connect();
    const busy = job();
    await survivor.submit(busy);
    const working = await claimNow(survivor);
    assert.equal(runIdOf(working), busy.runId, "the survivor is busy with a run of its own");
    const later = job();
    await survivor.submit(later);
    await harness.crash(harness.dispatcher);
    // The engine gives up the dead holder's lease (bounded); the survivor is still busy meanwhile.
    const deadline = Date.now() + harness.leaseBoundMs + 10_000;
    while ((await survivor.show(run.runId))?.state === "running") {
      assert.ok(Date.now() < deadline, "the dead holder's lease was never given up");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await working.complete({ state: "completed", result: "finished" });
    const taken = await claimNow(survivor, harness.leaseBoundMs);
    assert.equal(runIdOf(taken), run.runId, "the taken-over run goes before the later one");
    assert.equal(taken.attempt, 2);
    await taken.complete({ state: "completed", result: "finished" });
    const after = await claimNow(survivor, harness.leaseBoundMs);
    assert.equal(runIdOf(after), later.runId);
    await after.complete({ state: "completed", result: "finished" });
  });
}
