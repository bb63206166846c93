import type { Item } from "@podkit/llm-worker";
import type { Entry, SessionLog } from "@podkit/session-store";
import type { WorkerState } from "./pod-foundation.js";

/** The worker's starting state: empty for a new pod, the head segment's folded state on restore. */
export function workerStateOf(log: SessionLog<Item> | undefined): WorkerState {
  const state = log?.state;
  if (state === undefined) return {};
  return {
    ...(state.systemPrompt === null ? {} : { systemPrompt: state.systemPrompt }),
    history: [...state.history],
    config: state.config,
    interrupted: state.interrupted,
    previousRequestLength: state.usage.at(-1)?.historyLen,
  };
}

/**
 * A restored session can `resume()` when its last run paused, yielded or was stopped by a budget
 * cap, or ended awaiting approval (answers may have been appended after it).
 */
export function isResumable(last: Entry<Item>, log: SessionLog<Item>): boolean {
  if (log.state.awaitingApproval) return true;
  return (
    last.kind === "run_completed" &&
    (last.result === "paused" || last.result === "yielded" || last.result === "budget_exhausted")
  );
}

/** The warning for a restored session with other live branches besides the head it continues. */
export function otherBranchesWarning(sessionId: string, log: SessionLog<Item>): string | undefined {
  if (log.otherBranches.length === 0) return undefined;
  const ids = log.otherBranches.map((branch) => branch.segmentId).join(", ");
  return `session ${sessionId} has other live branches (${ids}); restored its head ${log.state.segmentId}`;
}
