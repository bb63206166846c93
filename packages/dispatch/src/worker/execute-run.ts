import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { Pod, type PodOptions, type PodRunResult } from "@podkit/pod";
import type { Store } from "@podkit/session-store";
import type { Claim, ClaimOutcome, Dispatcher, RunError, RunJob, ScheduleFiring } from "../dispatcher.js";
import { DispatchError, RunCancelledError } from "../errors.js";
import { RUN_DOMAIN, type RunEntry } from "../run-entries.js";
import { submitRun } from "../submit/submit-run.js";
import { isPermanentFailure, runErrorOf } from "./failure.js";
import { fencedStore } from "./fenced-store.js";
import { readRunProgress, readSubmitted } from "./run-progress.js";

/** What the worker reports for display (never for bookkeeping: the log and the engine keep that). */
export type RunWorkerEvent =
  | { type: "claimed"; runId: string; pod: string; sessionId: string; attempt: number; resumes: boolean }
  | { type: "ended"; runId: string; state: "completed" | "awaiting_approval" | "cancelled"; result?: string }
  | { type: "failed"; runId: string; error: RunError; retry: boolean }
  | { type: "lease_lost"; runId: string }
  | { type: "handed_back"; runId: string }
  | { type: "fired"; pod: string; schedule: string; firingId: string; runId: string; created: boolean }
  | { type: "warning"; message: string };

/** What one attempt needs of its worker. */
export interface AttemptHost {
  readonly dispatcher: Dispatcher;
  /** The session store every pod of the worker writes through (the caller's; never closed here). */
  readonly store: Store<Item>;
  manifestOf(pod: string): LoadedManifest;
  /** Options of every pod the worker opens, without `store` and `signal` (the attempt sets them). */
  podOptions(pod: string): PodOptions;
  /** Prepares a pod before its run (e.g. attaches memory). */
  preparePod?(pod: Pod): void;
  /** `host:pid`, recorded in each attempt's "started" entry. */
  readonly workerName: string;
  /** Aborts when the worker stops without draining: open attempts are handed back. */
  readonly stopping: AbortSignal;
  emit(event: RunWorkerEvent): void;
}

/** Runs one claimed piece of work to the end and settles its claim; never throws. */
export async function executeClaim(host: AttemptHost, claim: Claim): Promise<void> {
  const work = claim.work;
  try {
    if (work.kind === "run") await executeRun(host, claim, work.run);
    else await fireSchedule(host, claim, work);
  } catch (error) {
    await settleFailure(host, claim, work.kind === "run" ? work.run.runId : work.firingId, error);
  }
}

/**
 * One attempt of a run: restore the session (the system prompt and prefix verbatim), read what
 * earlier attempts left (see `readRunProgress`), mark the attempt, hand the input to `run` — or
 * `resume`, which closes tool calls left in flight by a dead worker as interrupted — record the end
 * and complete the claim.
 */
async function executeRun(host: AttemptHost, claim: Claim, job: RunJob): Promise<void> {
  const manifest = host.manifestOf(job.pod);
  const submitted = await readSubmitted(host.store, job);
  const signal = AbortSignal.any([claim.signal, host.stopping]);
  const store = fencedStore(host.store, job.runId, claim.leaseLost);
  const pod = await Pod.restore(manifest, job.sessionId, { ...host.podOptions(job.pod), store, signal });
  try {
    host.preparePod?.(pod);
    const progress = await readRunProgress(host.store, job, pod.segmentId as string);
    // A run that stopped awaiting approval and was requeued once every call is answered goes on
    // (`resume()` runs the allowed calls once); requeued too early, it settles as waiting again.
    const answered =
      progress.phase === "ended" &&
      progress.ended.state === "awaiting_approval" &&
      pod.awaitingApproval &&
      pod.pendingApprovals.length === 0;
    if (progress.phase === "ended" && !answered) return await settleRecorded(claim, progress.ended);
    if (progress.phase === "turn_ended") {
      await finish(pod, claim, job.runId, outcomeOf(progress.result));
      host.emit({ type: "ended", runId: job.runId, ...outcomeFields(outcomeOf(progress.result)) });
      return;
    }
    const resumes = answered || progress.phase === "committed" || submitted.input === null;
    await recordRunEntry(pod, {
      run_id: job.runId,
      event: "started",
      attempt: claim.attempt,
      worker: host.workerName,
      resumes,
    });
    host.emit({
      type: "claimed",
      runId: job.runId,
      pod: job.pod,
      sessionId: job.sessionId,
      attempt: claim.attempt,
      resumes,
    });
    let result: PodRunResult;
    try {
      result = await (resumes ? pod.resume() : pod.run(submitted.input as string));
    } catch (error) {
      if (RunCancelledError.isInstance(claim.signal.reason) && !claim.leaseLost.aborted) {
        await recordRunEntry(pod, { run_id: job.runId, event: "ended", state: "cancelled" });
        host.emit({ type: "ended", runId: job.runId, state: "cancelled" });
        return;
      }
      throw error;
    }
    await finish(pod, claim, job.runId, outcomeOf(result.status));
    host.emit({ type: "ended", runId: job.runId, ...outcomeFields(outcomeOf(result.status)) });
  } finally {
    await pod.close();
  }
}

/**
 * How a pod's stop reason settles the claim. The seam for durable approvals: a run that stops
 * `awaiting_approval` frees its worker (the claim completes as such) and `Dispatcher.requeue`
 * continues it once the approval is answered; every other stop reason completes the run.
 */
export function outcomeOf(stopReason: string): ClaimOutcome {
  return stopReason === "awaiting_approval"
    ? { state: "awaiting_approval" }
    : { state: "completed", result: stopReason };
}

function outcomeFields(outcome: ClaimOutcome): { state: ClaimOutcome["state"]; result?: string } {
  return outcome.state === "completed"
    ? { state: "completed", result: outcome.result }
    : { state: outcome.state };
}

async function finish(pod: Pod, claim: Claim, runId: string, outcome: ClaimOutcome): Promise<void> {
  await recordRunEntry(pod, { run_id: runId, event: "ended", ...outcomeFields(outcome) });
  await claim.complete(outcome);
}

/** An earlier attempt recorded the end but died before settling: settle the same way now. */
async function settleRecorded(claim: Claim, ended: Extract<RunEntry, { event: "ended" }>): Promise<void> {
  if (ended.state === "completed")
    await claim.complete({ state: "completed", result: ended.result ?? "finished" });
  else if (ended.state === "awaiting_approval") await claim.complete({ state: "awaiting_approval" });
  else if (ended.state === "failed") {
    await claim.fail(ended.error ?? { type: "Error", message: "failed" }, { retry: false });
  }
  // "cancelled": the engine settled the claim when the run was cancelled.
}

/** Appends a `dispatch.run` entry through the pod's own writer (after any turn in progress). */
function recordRunEntry(pod: Pod, entry: RunEntry): Promise<void> {
  return pod.appendExtension(RUN_DOMAIN, entry);
}

/**
 * A schedule firing becomes an ordinary run: a new session with the schedule's input, submitted
 * under a run id derived from the firing, so a firing retried after its worker died runs once.
 */
async function fireSchedule(host: AttemptHost, claim: Claim, firing: ScheduleFiring): Promise<void> {
  const manifest = host.manifestOf(firing.pod);
  const schedule = manifest.manifest.schedule.find((entry) => entry.name === firing.schedule);
  if (schedule === undefined) {
    throw new DispatchError(
      `schedule "${firing.schedule}" of pod "${firing.pod}" is no longer in its manifest; the firing was dropped`,
    );
  }
  const options = { ...host.podOptions(firing.pod), store: host.store, signal: claim.signal };
  const { run, created } = await submitRun(host.dispatcher, host.store, {
    pod: firing.pod,
    session: {
      create: async () => {
        const pod = await Pod.fromManifest(manifest, options);
        try {
          return await pod.startSession();
        } finally {
          await pod.close();
        }
      },
    },
    input: schedule.input,
    firing: { schedule: firing.schedule, firingId: firing.firingId },
  });
  await claim.complete({ state: "completed", result: `run ${run.runId}` });
  host.emit({
    type: "fired",
    pod: firing.pod,
    schedule: firing.schedule,
    firingId: firing.firingId,
    runId: run.runId,
    created,
  });
}

/** Settles a failed attempt: retried unless no retry can help, nothing when the claim is gone. */
async function settleFailure(host: AttemptHost, claim: Claim, runId: string, error: unknown): Promise<void> {
  try {
    if (claim.leaseLost.aborted) {
      host.emit({ type: "lease_lost", runId });
      return;
    }
    if (host.stopping.aborted && !isPermanentFailure(error)) {
      await claim.release();
      host.emit({ type: "handed_back", runId });
      return;
    }
    const retry = !isPermanentFailure(error);
    const recorded = runErrorOf(error);
    await claim.fail(recorded, { retry });
    host.emit({ type: "failed", runId, error: recorded, retry });
  } catch (settling) {
    // The engine will retry the claim once its lease runs out (e.g. the database is down now).
    host.emit({
      type: "warning",
      message: `run ${runId}: could not settle the attempt: ${String(settling)}`,
    });
  }
}
