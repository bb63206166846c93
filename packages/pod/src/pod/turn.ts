import { AbortedError, CancelledError } from "@podkit/llm-worker";
import type { BudgetExhausted } from "../budget/pod-budget.js";
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
  /** The `[budget]` cap that stopped the run before a request (the worker then yielded), if one did. */
  readonly budgetStop?: () => BudgetExhausted | undefined;
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
    // A cap stopped the run before a request (the worker yielded): the log says so, with the cap.
    const budget = result.status === "yielded" ? turn.budgetStop?.() : undefined;
    const status = budget === undefined ? result.status : "budget_exhausted";
    const completed = {
      kind: "run_completed",
      result: status,
      interrupted: worker.lastRunInterrupted,
    } as const;
    if (status === "finished") {
      const count = turns.finish();
      // One write for both (after a crash mid-write each line still commits on its own).
      await engine.requireHead().appendMany([{ kind: "turn_end", turn: count }, completed]);
      emit({ type: "turn_end", turn: count });
    } else if (budget !== undefined) {
      await engine
        .requireHead()
        .appendMany([{ kind: "extension", domain: "budget", payload: budget }, completed]);
      engine.extensions.set("budget", budget);
    } else {
      // Deferred approval requests and the run's end in one write (see ApprovalGate).
      await engine.requireHead().appendMany([...engine.approvals.takeDeferred(), completed]);
    }
    turns.ended(status);
    const usage = engine.usage.runRecords();
    // Who must answer what before the run goes on, at any depth of the tree (with the pod paths).
    if (status === "awaiting_approval")
      return { ...result, requests, usage, approvals: await engine.awaitedApprovals() };
    // A typed answer is the run's result once the run finished with it (docs/output.md).
    const accepted = status === "finished" ? engine.output?.accepted : undefined;
    if (budget === undefined)
      return { ...result, requests, usage, ...(accepted === undefined ? {} : { output: accepted.value }) };
    return {
      ...result,
      status,
      requests,
      usage,
      stopReason: { kind: "budget_exhausted", raw: undefined },
      budget,
    };
  } catch (caught) {
    // A guardrail's stop reaches the caller as itself, not as the worker's cancellation.
    const stopped = engine.guardrails.errorOf(caught);
    const error = engine.output?.errorOf(stopped) ?? stopped;
    try {
      await recordFailure(engine, turn, error);
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
 * Closes a turn that failed. What a person wrote is never lost: a user turn keeps its `invoke` and
 * its message (written now, with the failure, when the turn stopped before its first write) and is
 * closed with `run_errored`, whether it was cancelled or failed, with model output or without —
 * only model output that never committed is gone (it never reached the log). A turn without input
 * (a notification's, a resume) cancelled before any model output is rolled back instead (the log
 * cut to before its `invoke`, its notifications queued again).
 */
async function recordFailure(engine: PodEngine, turn: Turn, error: unknown): Promise<void> {
  const log = engine.requireHead();
  // A user turn that failed before its first item wrote nothing, not even its invoke.
  const unwritten = engine.recorder.takeUnwrittenOpening();
  // Where the turn's entries begin: its written invoke, or the end of the log when it wrote none.
  const turnStart = unwritten === undefined ? log.state.inFlight?.entryIndex : log.entryCount;
  // Nothing is open (an abort during a compaction, after the old segment's turn was closed).
  if (turnStart === undefined) return;
  const cancelled = AbortedError.isInstance(error) || CancelledError.isInstance(error);
  if (cancelled && !engine.recorder.hasModelOutput && turn.input === undefined) {
    await engine.rollBack(turnStart);
    return;
  }
  engine.turns.failed();
  const message = error instanceof Error ? error.message : String(error);
  // The message never reached the log (the turn stopped before the worker committed it): kept now.
  const lostInput = turn.input !== undefined && !engine.recorder.userInputWritten;
  await log.appendMany([
    ...(unwritten === undefined ? [] : [unwritten]),
    ...(lostInput ? [{ kind: "user_input", text: turn.input } as const] : []),
    { kind: "run_errored", message, interrupted: true },
  ]);
  if (lostInput) {
    // It entered the log here, not through the worker: the worker's history follows the log.
    engine.worker.setHistory([...log.state.history]);
    engine.worker.setInterrupted(true);
  }
}
