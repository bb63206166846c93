export type { ErrorKind } from "@podkit/llm-worker";
export { awaitingRunOf, type Continuation, continueAfterAnswer } from "./continue/continue-after-answer.js";
export type {
  Claim,
  ClaimOutcome,
  Dispatcher,
  EntryRef,
  RunError,
  RunFilter,
  RunInfo,
  RunJob,
  RunState,
  ScheduleFiring,
  ScheduleSpec,
  SubmitOutcome,
} from "./dispatcher.js";
export { FINAL_RUN_STATES } from "./dispatcher.js";
export {
  DispatchError,
  LeaseLostError,
  RunCancelledError,
  RunInputError,
  RunStateError,
  SessionRunningError,
  UnknownPodError,
  UnknownRunError,
} from "./errors.js";
export {
  InProcessDispatcher,
  InProcessQueue,
  type InProcessQueueOptions,
} from "./in-process/in-process-queue.js";
export {
  type EndedEntry,
  RUN_DOMAIN,
  type RunEntry,
  RunEntrySchema,
  type SubmittedEntry,
} from "./run-entries.js";
export { type RunJournalEntry, readRunJournal } from "./run-journal.js";
export { type RunRequest, runIdForKey, submitRun } from "./submit/submit-run.js";
export { outcomeOf, type RunWorkerEvent } from "./worker/execute-run.js";
export { type RunProgress, readRunProgress } from "./worker/run-progress.js";
export { RunWorker, type RunWorkerOptions } from "./worker/run-worker.js";
