import { AbortedError, CancelledError } from "@podkit/llm-worker";
import type { PodEvent, PodRunResult, PodTrigger } from "./events.js";
import type { CompactionReporting } from "./pod-compaction.js";
import type { PodEngine } from "./pod-engine.js";

/** One turn as the pod starts it. */
export interface Turn {
  readonly trigger: PodTrigger;
  readonly input: string | undefined;
  readonly signal: AbortSignal;
  /** Where the turn's events go, and a compaction's inside it (with its worker's telemetry). */
  readonly report: CompactionReporting;
}

/**
 * One turn after the run prelude: `invoke`, the interrupt closure when due, the worker's run, the
 * request path's compactions (yield → compact → resume in the new segment), and the closing
 * entries — persisted and closed whatever happens.
 */
export async function runTurn(engine: PodEngine, turn: Turn): Promise<PodRunResult> {
  const { worker, recorder, turns } = engine;
  const { trigger, input, signal } = turn;
  const emit = (event: PodEvent) => turn.report.emit(event);
  const started = () => emit({ type: "turn_start", turn: turns.turns + 1, trigger });
  engine.usage.startRun();
  engine.notifications.startTurn();
  const invoke = { kind: "invoke", trigger } as const;
  if (input === undefined) {
    // The resume of a run awaiting approval claims the session: of two processes resuming at once,
    // one writes its invoke and runs the approved calls, the other gets SessionBusyError (no fork).
    const claim = trigger === "resume" && engine.requireHead().state.awaitingApproval;
    await engine.requireHead().append(invoke, { signal, ...(claim ? { ifUnchanged: true } : {}) });
    started();
  } else {
    // Written with the turn's first item, the user's message (or the interrupt closure before it).
    recorder.openTurn(invoke, started);
  }
  try {
    // Only a paused or yielded turn is continued as it is; after an abort, an error or a crash
    // the open tool calls may have run already, so they are closed instead of run again.
    const continuing = trigger === "resume" && turns.resumable;
    if (worker.lastRunInterrupted && !continuing)
      await recorder.recordInterrupt(worker, engine.catalog, trigger);
    recorder.startTurn();
    engine.compaction.startTurn();
    engine.approvals.startTurn();
    let result = input === undefined ? await worker.resume({ signal }) : await worker.run(input, { signal });
    let requests = result.requests;
    while (result.status === "yielded" && engine.compaction.requested) {
      turns.ended("yielded");
      await engine.compactMidTurn(signal, turn.report);
      result = await worker.resume({ signal });
      requests += result.requests;
    }
    const completed = {
      kind: "run_completed",
      result: result.status,
      interrupted: worker.lastRunInterrupted,
    } as const;
    if (result.status === "finished") {
      const count = turns.finish();
      // One write for both (after a crash mid-write each line still commits on its own).
      await engine.requireHead().appendMany([{ kind: "turn_end", turn: count }, completed]);
      emit({ type: "turn_end", turn: count });
    } else {
      // Deferred approval requests and the run's end in one write (see ApprovalGate).
      await engine.requireHead().appendMany([...engine.approvals.takeDeferred(), completed]);
    }
    turns.ended(result.status);
    return { ...result, requests, usage: engine.usage.runRecords() };
  } catch (error) {
    try {
      await recordFailure(engine, error);
    } catch (recording) {
      // The run's own error is what the caller must see; the failed write is reported beside it.
      engine.warn({
        code: "pod.session_write",
        message: `could not record the end of the turn: ${String(recording)}`,
      });
    }
    throw error;
  }
}

/**
 * A cancelled turn with no model output yet is rolled back (the log cut to before its `invoke`,
 * the pod's state back to that point); any other failure closes the `invoke` (written now with
 * the failure when the turn wrote nothing yet, so the log tells of the failed turn).
 */
async function recordFailure(engine: PodEngine, error: unknown): Promise<void> {
  const log = engine.requireHead();
  // A user turn that failed before its first item wrote nothing, not even its invoke.
  const unwritten = engine.recorder.takeUnwrittenOpening();
  // Where the turn's entries begin: its written invoke, or the end of the log when it wrote none.
  const turnStart = unwritten === undefined ? log.state.inFlight?.entryIndex : log.entryCount;
  // Nothing is open (an abort during a compaction, after the old segment's turn was closed).
  if (turnStart === undefined) return;
  const cancelled = AbortedError.isInstance(error) || CancelledError.isInstance(error);
  if (cancelled && !engine.recorder.hasModelOutput) {
    await engine.rollBack(turnStart);
    return;
  }
  engine.turns.failed();
  const message = error instanceof Error ? error.message : String(error);
  const errored = { kind: "run_errored", message, interrupted: true } as const;
  await log.appendMany(unwritten === undefined ? [errored] : [unwritten, errored]);
}
