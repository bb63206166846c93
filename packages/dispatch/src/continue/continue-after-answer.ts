import type { Item } from "@podkit/llm-worker";
import { type AwaitedApproval, nextAfterAnswer, type SessionState, type Store } from "@podkit/session-store";
import type { Dispatcher } from "../dispatcher.js";
import { DispatchError } from "../errors.js";
import { RUN_DOMAIN, RunEntrySchema } from "../run-entries.js";

/**
 * What continues a tree after an answer was recorded in one of its sessions — the one decision
 * `podkit approve`, `podkit resume`, the HTTP route, the viewer and the dispatcher's workers share:
 * - `wait`: calls the waiting run depends on are still unanswered (listed, with their sessions);
 * - `resume`: resume `sessionId` here (the top of the chain of runs that waited on each other);
 * - `requeued`: that session's run is a dispatched run waiting for these answers: it is queued
 *   again (now, or by a concurrent answer), and a worker resumes it;
 * - `none`: nothing waits any more (the run went on, or a new input closed its calls).
 */
export type Continuation =
  | { readonly kind: "wait"; readonly sessionId: string; readonly pending: AwaitedApproval[] }
  | { readonly kind: "resume"; readonly sessionId: string }
  | { readonly kind: "requeued"; readonly sessionId: string; readonly runId: string }
  | { readonly kind: "none"; readonly sessionId: string };

/**
 * The dispatched run a session's state says is waiting for approvals: its latest `dispatch.run`
 * entry ended `awaiting_approval` and the session's last run is still awaiting (nothing ran since).
 */
export function awaitingRunOf(
  state: Pick<SessionState, "extensions" | "awaitingApproval">,
): string | undefined {
  if (!state.awaitingApproval) return undefined;
  const latest = RunEntrySchema.safeParse(state.extensions.get(RUN_DOMAIN));
  if (!latest.success || latest.data.event !== "ended" || latest.data.state !== "awaiting_approval")
    return undefined;
  return latest.data.run_id;
}

/**
 * Decides (and for a dispatched run, does) what continues after an answer in session
 * `sessionId` (see `Continuation`). A dispatched run is requeued only while the dispatcher still
 * holds it `awaiting_approval` — never a run that completed, was cancelled or dead-lettered — and
 * one that is already queued or running again (a concurrent answer requeued it) is reported as
 * `requeued`, not requeued twice. `dispatcher` is called only when a dispatched run waits (the
 * caller closes what it opened); without one, such a session is a `DispatchError` saying what to do.
 */
export async function continueAfterAnswer(
  store: Store<Item>,
  sessionId: string,
  options: { dispatcher?: () => Promise<Dispatcher> } = {},
): Promise<Continuation> {
  const next = await nextAfterAnswer(store, sessionId);
  if (next.kind !== "resume") return next;
  const runId = awaitingRunOf(next.state);
  if (runId === undefined) return { kind: "resume", sessionId: next.sessionId };
  if (options.dispatcher === undefined) {
    throw new DispatchError(
      `session ${next.sessionId} is dispatched run ${runId}, which waits for these answers: a worker continues it once it is requeued`,
      {
        hint: `answer with \`podkit approve\` where the dispatcher's database is reachable (it requeues run ${runId})`,
      },
    );
  }
  const dispatcher = await options.dispatcher();
  const run = await dispatcher.show(runId);
  if (run?.state === "awaiting_approval") {
    await dispatcher.requeue(runId);
    return { kind: "requeued", sessionId: next.sessionId, runId };
  }
  if (run?.state === "queued" || run?.state === "running" || run?.state === "retrying") {
    return { kind: "requeued", sessionId: next.sessionId, runId };
  }
  return { kind: "none", sessionId: next.sessionId };
}
