import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { Pod, type PodOptions, type PodRunResult } from "@podkit/pod";
import { nextAfterAnswer, type Store } from "@podkit/session-store";
import type { Claim, ClaimOutcome, Dispatcher, RunError, RunJob, ScheduleFiring } from "../dispatcher.js";
import { DispatchError, LeaseLostError, RunCancelledError } from "../errors.js";
import { RUN_DOMAIN, type RunEntry } from "../run-entries.js";
import { submitRun } from "../submit/submit-run.js";
import { isPermanentFailure, runErrorOf } from "./failure.js";
import { fencedStore } from "./fenced-store.js";
import { LeaseFence } from "./lease-fence.js";
import { readRunProgress, readSubmitted } from "./run-progress.js";

/** What the worker reports for display (never for bookkeeping: the log and the engine keep that). */
export type RunWorkerEvent =
  | { type: "claimed"; runId: string; pod: string; sessionId: string; attempt: number; resumes: boolean }
  | {
      type: "ended";
      runId: string;
      state: "completed" | "awaiting_approval" | "cancelled";
      result?: string;
      /** The run's typed answer (docs/output.md), when its pod has an output schema. */
      output?: unknown;
    }
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

/**
 * Runs one claimed piece of work to the end and settles its claim — always, on every path, so the
 * worker's slot is free for the next claim; never throws.
 */
export async function executeClaim(host: AttemptHost, claim: Claim): Promise<void> {
  const work = claim.work;
  const id = work.kind === "run" ? work.run.runId : work.firingId;
  const fence = new LeaseFence(claim, id);
  try {
    if (work.kind === "run") await executeRun(host, claim, work.run, fence);
    else await fireSchedule(host, claim, work);
  } catch (error) {
    await settleFailure(host, claim, id, error, fence);
  } finally {
    fence.dispose();
  }
}

/**
 * One attempt of a run: restore the session (the system prompt and prefix verbatim), read what
 * earlier attempts left (see `readRunProgress`), mark the attempt, hand the input to `run` — or
 * `resume`, which closes tool calls left in flight by a dead worker as interrupted — record the end
 * and complete the claim. Every write and every tool start passes `fence` first; a closed fence
 * stops the pod (its signal) and fails the attempt with `LeaseLostError`.
 */
async function executeRun(host: AttemptHost, claim: Claim, job: RunJob, fence: LeaseFence): Promise<void> {
  const manifest = host.manifestOf(job.pod);
  const submitted = await readSubmitted(host.store, job);
  const signal = AbortSignal.any([claim.signal, host.stopping, fence.signal]);
  const store = fencedStore(host.store, fence);
  const options = fencedPodOptions(host.podOptions(job.pod), fence);
  const pod = await Pod.restore(manifest, job.sessionId, { ...options, store, signal });
  try {
    host.preparePod?.(pod);
    const progress = await readRunProgress(host.store, job, pod.segmentId as string);
    // A run that stopped awaiting approval and was requeued goes on when the one continuation rule
    // (`nextAfterAnswer`, the decision every door shares) says this session resumes now: every call
    // it waits on, at any depth of its tree, is answered. Requeued too early, it settles as waiting
    // again; when the session went on without it, the run completes: its state follows the log.
    let answered = false;
    if (progress.phase === "ended" && progress.ended.state === "awaiting_approval") {
      const next = await nextAfterAnswer(host.store, job.sessionId);
      if (next.kind === "none") {
        const outcome = { state: "completed", result: "continued outside the dispatcher" } as const;
        await finish(pod, claim, job.runId, outcome);
        host.emit({ type: "ended", runId: job.runId, ...outcomeFields(outcome) });
        return;
      }
      answered = next.kind === "resume" && next.sessionId === job.sessionId;
    }
    if (progress.phase === "ended" && !answered) return await settleRecorded(claim, progress.ended);
    if (progress.phase === "turn_ended") {
      const outcome = outcomeOf(progress.result, progress);
      await finish(pod, claim, job.runId, outcome);
      host.emit({ type: "ended", runId: job.runId, ...outcomeFields(outcome) });
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
    // An earlier attempt committed the input and never ended: this attempt takes the run over, and
    // the closing notes of the turn it left open say the run moved to another worker.
    const takeover = progress.phase === "committed" && !answered;
    let result: PodRunResult;
    try {
      result = await (resumes
        ? pod.resume(takeover ? { interruptCause: "moved" } : {})
        : pod.run(submitted.input as string));
    } catch (error) {
      if (RunCancelledError.isInstance(claim.signal.reason) && !fence.closed) {
        await recordRunEntry(pod, { run_id: job.runId, event: "ended", state: "cancelled" });
        // The engine ended the run when it was cancelled: settling frees this worker's slot.
        await claim.release();
        host.emit({ type: "ended", runId: job.runId, state: "cancelled" });
        return;
      }
      throw error;
    }
    const outcome = outcomeOf(result.status, result);
    await finish(pod, claim, job.runId, outcome);
    host.emit({ type: "ended", runId: job.runId, ...outcomeFields(outcome) });
  } finally {
    await pod.close();
  }
}

/**
 * How a pod's stop reason settles the claim. The seam for durable approvals: a run that stops
 * `awaiting_approval` frees its worker (the claim completes as such) and `Dispatcher.requeue`
 * continues it once the approval is answered; every other stop reason completes the run, with the
 * typed answer `typed` carries when the run gave one (`result.output`, docs/output.md).
 */
export function outcomeOf(stopReason: string, typed: { output?: unknown } = {}): ClaimOutcome {
  if (stopReason === "awaiting_approval") return { state: "awaiting_approval" };
  return {
    state: "completed",
    result: stopReason,
    ...(typed.output === undefined ? {} : { output: typed.output }),
  };
}

function outcomeFields(outcome: ClaimOutcome): {
  state: ClaimOutcome["state"];
  result?: string;
  output?: unknown;
} {
  if (outcome.state !== "completed") return { state: outcome.state };
  const { output } = outcome;
  return { state: "completed", result: outcome.result, ...(output === undefined ? {} : { output }) };
}

async function finish(pod: Pod, claim: Claim, runId: string, outcome: ClaimOutcome): Promise<void> {
  await recordRunEntry(pod, { run_id: runId, event: "ended", ...outcomeFields(outcome) });
  await claim.complete(outcome);
}

/** An earlier attempt recorded the end but died before settling: settle the same way now. */
async function settleRecorded(claim: Claim, ended: Extract<RunEntry, { event: "ended" }>): Promise<void> {
  if (ended.state === "completed")
    await claim.complete({
      state: "completed",
      result: ended.result ?? "finished",
      ...(ended.output === undefined ? {} : { output: ended.output }),
    });
  else if (ended.state === "awaiting_approval") await claim.complete({ state: "awaiting_approval" });
  else if (ended.state === "failed") {
    await claim.fail(ended.error ?? { type: "Error", message: "failed" }, { retry: false });
  }
  // "cancelled": the engine settled the run when it was cancelled; settling frees the slot.
  else await claim.release();
}

/**
 * The attempt's pod options: the worker's, with the fence checked right before each tool call
 * starts (in the pod and its children), before any check the worker's options bring.
 */
function fencedPodOptions(options: PodOptions, fence: LeaseFence): PodOptions {
  const own = options.toolStartCheck;
  return {
    ...options,
    toolStartCheck: (call) => {
      fence.check();
      own?.(call);
    },
  };
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

/**
 * Settles a failed attempt: retried unless no retry can help. An attempt whose fence closed (its
 * lease lapsed, was reported lost, or another writer appeared) settles as a retry too: fenced to
 * this attempt, that changes nothing when another attempt holds the run now, and retries a run the
 * engine still counted as this worker's; either way the worker's slot is free again.
 */
async function settleFailure(
  host: AttemptHost,
  claim: Claim,
  runId: string,
  error: unknown,
  fence: LeaseFence,
): Promise<void> {
  try {
    if (fence.closed || claim.leaseLost.aborted || LeaseLostError.isInstance(error)) {
      fence.close(error);
      await claim.fail(runErrorOf(new LeaseLostError(runId, fence.signal.reason)), { retry: true });
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
