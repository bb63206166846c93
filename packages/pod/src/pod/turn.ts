import { AbortedError, CancelledError, type Item, type UsageRecord, type Worker } from "@podkit/llm-worker";
import type { SessionLog } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { WarningSink } from "../warnings.js";
import type { PodEvent, PodRunResult, PodTrigger } from "./events.js";
import type { CompactionHost, PodCompaction } from "./pod-compaction.js";
import type { SessionRecorder } from "./session-recorder.js";

/** Session counters a turn advances; the pod owns the object. */
export interface TurnState {
  /** Completed turns of the session. */
  turns: number;
  /** The last run ended paused or yielded, so `resume()` may run its open tool calls. */
  resumable: boolean;
}

/** What one turn needs of its pod. */
export interface TurnHost {
  readonly worker: Worker;
  readonly recorder: SessionRecorder;
  readonly catalog: PromptCatalog;
  readonly compaction: PodCompaction;
  readonly state: TurnState;
  /** Every usage record of the current segment (reset by compaction, cut by a rollback). */
  readonly usageRecords: UsageRecord[];
  readonly warn: WarningSink;
  /** The segment written now (compaction moves it). */
  log(): SessionLog<Item>;
  compactionHost(): CompactionHost;
  /** After a rollback: take the context key and prune boundary from what the log holds now. */
  syncFromLog(): void;
}

/**
 * One turn after the run prelude: `invoke`, the interrupt closure when due, the worker's run, the
 * request path's compactions (yield → compact → resume in the new segment), and the closing
 * entries — persisted and closed whatever happens.
 */
export async function runTurn(
  host: TurnHost,
  turn: {
    trigger: PodTrigger;
    input: string | undefined;
    signal: AbortSignal;
    emit: (event: PodEvent) => void;
  },
): Promise<PodRunResult> {
  const { worker, recorder, state } = host;
  const { trigger, input, signal, emit } = turn;
  await host.log().append({ kind: "invoke", trigger }, { signal });
  const usage: UsageRecord[] = [];
  const collect = worker.subscribe((event) => {
    if (event.type === "usage") usage.push(event.usage);
  });
  emit({ type: "turn_start", turn: state.turns + 1, trigger });
  try {
    // Only a paused or yielded turn is continued as it is; after an abort, an error or a crash
    // the open tool calls may have run already, so they are closed instead of run again.
    const continuing = trigger === "resume" && state.resumable;
    if (worker.lastRunInterrupted && !continuing) await recorder.recordInterrupt(worker, host.catalog);
    recorder.modelOutputSinceInvoke = 0;
    // Only a yield of this turn's own request check means "compact now" (a hook may yield too).
    host.compaction.requested = false;
    let result = input === undefined ? await worker.resume({ signal }) : await worker.run(input, { signal });
    let requests = result.requests;
    while (result.status === "yielded" && host.compaction.requested) {
      state.resumable = true;
      await host.compaction.compactMidTurn(host.compactionHost(), signal, emit);
      result = await worker.resume({ signal });
      requests += result.requests;
    }
    const completed = {
      kind: "run_completed",
      result: result.status,
      interrupted: worker.lastRunInterrupted,
    } as const;
    if (result.status === "finished") {
      state.turns += 1;
      // One write for both (after a crash mid-write each line still commits on its own).
      await host.log().appendMany([{ kind: "turn_end", turn: state.turns }, completed]);
      emit({ type: "turn_end", turn: state.turns });
    } else {
      await host.log().append(completed);
    }
    state.resumable = result.status === "paused" || result.status === "yielded";
    return { ...result, requests, usage };
  } catch (error) {
    try {
      await recordFailure(host, error);
    } catch (recording) {
      // The run's own error is what the caller must see; the failed write is reported beside it.
      host.warn({
        code: "pod.session_write",
        message: `could not record the end of the turn: ${String(recording)}`,
      });
    }
    throw error;
  } finally {
    collect();
  }
}

/**
 * A cancelled turn with no model output yet is rolled back (the log cut to before its `invoke`,
 * the worker reset to that state); any other failure closes the `invoke`.
 */
async function recordFailure(host: TurnHost, error: unknown): Promise<void> {
  const log = host.log();
  const inFlight = log.state.inFlight;
  // Nothing is open (an abort during a compaction, after the old segment's turn was closed).
  if (inFlight == null) return;
  const cancelled = AbortedError.isInstance(error) || CancelledError.isInstance(error);
  if (cancelled && host.recorder.modelOutputSinceInvoke === 0) {
    await log.truncate(inFlight.entryIndex);
    host.worker.setHistory([...log.state.history]);
    host.worker.setInterrupted(log.state.interrupted);
    host.usageRecords.splice(0, host.usageRecords.length, ...log.state.usage);
    host.syncFromLog();
    return;
  }
  host.state.resumable = false;
  const message = error instanceof Error ? error.message : String(error);
  await log.append({ kind: "run_errored", message, interrupted: true });
}
