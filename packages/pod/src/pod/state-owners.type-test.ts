import type { UsageRecord } from "@podkit/llm-worker";
import type { PodCompaction } from "./pod-compaction.js";
import type { PodEngine } from "./pod-engine.js";
import type { SessionRecorder } from "./session-recorder.js";
import type { TurnState } from "./turn-state.js";
import type { UsageLedger } from "./usage-ledger.js";

/**
 * Type-level test of who owns the pod's turn state, compiled by `tsc -b` with the package (never
 * run): each piece changes only through its owner's methods, never by another file writing it.
 * Each `@ts-expect-error` must meet an error, or the build fails with TS2578.
 */
export function stateOwnerChecks(
  engine: PodEngine,
  compaction: PodCompaction,
  recorder: SessionRecorder,
  turns: TurnState,
  usage: UsageLedger,
  record: UsageRecord,
): void {
  // @ts-expect-error the "compact now" request is PodCompaction's (its preRequest sets it, startTurn clears it)
  compaction.requested = false;
  // @ts-expect-error model output is counted by the recorder alone (startTurn resets it)
  recorder.hasModelOutput = false;
  // @ts-expect-error completed turns advance through finish()
  turns.turns += 1;
  // @ts-expect-error resumable follows ended() and failed()
  turns.resumable = true;
  // @ts-expect-error usage records come from the worker's usage callback (record) only
  usage.records.push(record);
  // @ts-expect-error the head segment moves only inside the engine (session creation, compaction)
  engine.log = undefined;
  // @ts-expect-error the turn's signal is the engine's, set for the length of runTurn
  engine.turnSignal = undefined;
}
