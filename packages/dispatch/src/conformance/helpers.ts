import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { Claim, Dispatcher, RunJob } from "../dispatcher.js";

/** A run job with fresh ids (the suite never needs a real session: the engine carries ids only). */
export function job(overrides: Partial<RunJob> = {}): RunJob {
  return {
    runId: randomUUID(),
    pod: "reviewer",
    sessionId: randomUUID(),
    input: { segmentId: randomUUID(), index: 1 },
    ...overrides,
  };
}

/** Claims with a deadline: the claim, or undefined when nothing came within `ms`. */
export async function claimWithin(
  dispatcher: Dispatcher,
  ms: number,
  pods: readonly string[] = ["reviewer"],
): Promise<Claim | undefined> {
  const signal = AbortSignal.timeout(ms);
  return dispatcher.claim({ pods, signal });
}

/** Claims, failing the test when nothing comes within `ms`. */
export async function claimNow(
  dispatcher: Dispatcher,
  ms = 10_000,
  pods?: readonly string[],
): Promise<Claim> {
  const claim = await claimWithin(dispatcher, ms, pods);
  assert.ok(claim, `nothing to claim within ${ms} ms`);
  return claim;
}

/** The run id of a run claim. */
export function runIdOf(claim: Claim): string {
  assert.equal(claim.work.kind, "run");
  return claim.work.kind === "run" ? claim.work.run.runId : "";
}

/** Resolves when `signal` aborts, or rejects after `ms`. */
export function aborted(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => reject(new Error(`signal did not abort within ${ms} ms`)), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Claims from whichever of `dispatchers` the engine delivers to first (an engine may hand a run to
 * any instance that has asked for work); the other claims are abandoned.
 */
export async function claimFromAny(dispatchers: readonly Dispatcher[], ms = 10_000): Promise<Claim> {
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(ms)]);
  const claims = dispatchers.map((dispatcher) => dispatcher.claim({ pods: ["reviewer"], signal }));
  const first = await Promise.race(
    claims
      .map((claim) => claim.then((c) => c ?? Promise.race([])))
      .concat(
        new Promise<never>((_, reject) =>
          signal.addEventListener("abort", () => reject(new Error(`nothing to claim within ${ms} ms`))),
        ),
      ),
  );
  stop.abort();
  // A claim that arrived at another dispatcher meanwhile goes back to the engine.
  for (const other of await Promise.all(claims))
    if (other !== undefined && other !== first) await other.release();
  return first;
}
