import type { Item } from "@podkit/llm-worker";
import type { Entry, SessionLog, Store } from "@podkit/session-store";
import { REWIND_DOMAIN } from "../rewind/recorded-changes.js";
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

/**
 * The warning for a restored session with other live branches besides the head it continues. A
 * branch a rewind left (its last entry is the rewind's claim naming the new head) is not one: the
 * session was taken back on purpose, and `session show` still lists it.
 */
export async function otherBranchesWarning<TItem>(
  store: Store<TItem>,
  sessionId: string,
  log: SessionLog<TItem>,
): Promise<string | undefined> {
  const live: string[] = [];
  for (const branch of log.otherBranches) {
    const { last } = await store.describeSegment({
      sessionId: log.state.sessionId,
      segmentId: branch.segmentId,
    });
    if (!leftByRewind(last)) live.push(branch.segmentId);
  }
  if (live.length === 0) return undefined;
  return `session ${sessionId} has other live branches (${live.join(", ")}); restored its head ${log.state.segmentId}`;
}

/** A segment's last entry is a rewind's claim that forked the conversation to a new head. */
function leftByRewind<TItem>(last: Entry<TItem>): boolean {
  if (last.kind !== "extension" || last.domain !== REWIND_DOMAIN) return false;
  const payload = last.payload as { segment_id?: unknown } | null;
  return typeof payload?.segment_id === "string";
}
