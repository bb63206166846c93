import { isAnswerable, isPendingApproval } from "../approvals/answer-approval.js";
import type { MinimalItem } from "../entry/entry-schema.js";
import { restoreSession } from "../log/session-log.js";
import type { ApprovalRecord, SessionState } from "../replay/session-state.js";
import type { Store } from "../store/store.js";
import { parentOf } from "./session-tree.js";

/** A call a person must answer, with the session whose log holds it (a root's, or a sub-pod's). */
export interface AwaitedApproval extends ApprovalRecord {
  readonly sessionId: string;
}

/** How deep delegations are followed: as deep as a tree goes (a forged circle stops here). */
const MAX_DELEGATION_DEPTH = 64;

/**
 * The calls a person must answer before session `sessionId`'s run, stopped `awaiting_approval`,
 * can go on: its own pending calls, and for each call delegated to a child (a sub-pod's
 * foreground run that stopped on approvals) the calls that child waits on, at any depth — each
 * with the session that holds it and its pod path. Empty when the session's last run is not
 * awaiting approval.
 */
export async function approvalsAwaitedBy<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<AwaitedApproval[]> {
  const found: AwaitedApproval[] = [];
  const seen = new Set<string>();
  const visit = async (id: string, depth: number): Promise<void> => {
    if (seen.has(id) || depth > MAX_DELEGATION_DEPTH) return;
    seen.add(id);
    const state = await restoreSession(store, id);
    if (!state.awaitingApproval) return;
    for (const record of state.approvals) {
      if (isAnswerable(record)) found.push({ ...record, sessionId: id });
      else if (isPendingApproval(record) && record.childSessionId !== undefined)
        await visit(record.childSessionId, depth + 1);
    }
  };
  await visit(sessionId, 0);
  return found;
}

/**
 * What happens to a tree after an answer was recorded in session `sessionId` — decided here
 * alone, for every door (`podkit approve`, the HTTP route, the viewer, the dispatcher):
 * - `wait`: calls the waiting run depends on are still unanswered (listed, with their sessions);
 * - `resume`: nothing more is awaited: resume `sessionId` of this result — the top of the chain
 *   of runs that waited on each other (a child's answered call continues through its parent's
 *   delegated call up to the root that stopped on it), so the tree continues once, from there;
 * - `none`: the session's run is not awaiting approval (it went on already, or a new input closed
 *   the calls): nothing continues.
 */
export type NextAfterAnswer =
  | { readonly kind: "wait"; readonly sessionId: string; readonly pending: AwaitedApproval[] }
  | { readonly kind: "resume"; readonly sessionId: string; readonly state: SessionState<MinimalItem> }
  | { readonly kind: "none"; readonly sessionId: string };

/** See `NextAfterAnswer`. */
export async function nextAfterAnswer<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<NextAfterAnswer> {
  let top = sessionId;
  let state = await restoreSession(store, top);
  if (!state.awaitingApproval) return { kind: "none", sessionId };
  // Climb while the parent's run waits on this one through a delegated call.
  for (let level = 0; level < MAX_DELEGATION_DEPTH; level++) {
    const link = await parentOf(store, top);
    if (link === undefined) break;
    const parent = await restoreSession(store, link.session_id);
    const waits =
      parent.awaitingApproval &&
      parent.approvals.some((record) => isPendingApproval(record) && record.childSessionId === top);
    if (!waits) break;
    top = link.session_id;
    state = parent;
  }
  const pending = await approvalsAwaitedBy(store, top);
  if (pending.length > 0) return { kind: "wait", sessionId: top, pending };
  return { kind: "resume", sessionId: top, state: state as SessionState<MinimalItem> };
}

/**
 * The session of the tree under `sessionId` whose log holds the pending call `callId`: the
 * session itself when it does, else the one among the calls its run awaits (a sub-pod's);
 * undefined when neither holds it. Lets a person answer a child's call from the root.
 */
export async function sessionHoldingCall<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
  callId: string,
): Promise<string | undefined> {
  const own = await restoreSession(store, sessionId);
  if (own.approvals.some((record) => record.callId === callId)) return sessionId;
  return (await approvalsAwaitedBy(store, sessionId)).find((record) => record.callId === callId)?.sessionId;
}
