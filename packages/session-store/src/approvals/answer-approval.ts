import { hostname, userInfo } from "node:os";
import { z } from "zod";
import { ApprovalDecisionSchema, type EntryInput, type MinimalItem } from "../entry/entry-schema.js";
import { appendAsGuest } from "../log/guest-append.js";
import type { SessionLog, SessionLogOptions } from "../log/session-log.js";
import type { ApprovalRecord } from "../replay/session-state.js";
import type { Store } from "../store/store.js";
import {
  ApprovalAlreadyAnsweredError,
  ApprovalDelegatedError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  InvalidApprovalAnswerError,
} from "./approval-errors.js";

/**
 * An answer to a pending approval; `by` defaults to the local user and host. The one schema of an
 * answer, whoever gives it (the CLI, an HTTP request, the viewer, a queue job).
 */
export const ApprovalAnswerInputSchema = z.strictObject({
  decision: z.enum(ApprovalDecisionSchema.options, { error: 'give the decision as "allow" or "deny"' }),
  reason: z.string().max(4000).optional(),
  by: z.string().min(1).max(200).optional(),
});
export type ApprovalAnswerInput = z.infer<typeof ApprovalAnswerInputSchema>;

/**
 * True while an approval waits: for its answer, or (a delegated one) for its call's result once
 * the child's approvals it waits on are answered and the call is resumed.
 */
export function isPendingApproval(record: ApprovalRecord): boolean {
  return record.answer === undefined && !record.closed;
}

/** True for a pending approval a person answers: not a delegated one (those wait on a child's). */
export function isAnswerable(record: ApprovalRecord): boolean {
  return isPendingApproval(record) && record.childSessionId === undefined;
}

/** `user@host` of this process, or `podkit` where the system cannot tell. */
export function localAnswerer(): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the host alone says where it came from.
  }
  return user === undefined || user === "" ? hostname() || "podkit" : `${user}@${hostname()}`;
}

/** Checks an answer's shape (untrusted: from a CLI, an HTTP request, a queue job). */
export function parseApprovalAnswer(answer: unknown): ApprovalAnswerInput {
  const parsed = ApprovalAnswerInputSchema.safeParse(answer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.join(".")}: `;
  throw new InvalidApprovalAnswerError(`${where}${issue?.message ?? "not an object"}`);
}

/**
 * The `approval_answered` entry for `callId` in `log`'s state, or the approval error that says why
 * there is none to write: the call is unknown, delegated to a child, answered or closed.
 */
function answerEntry<TItem>(
  log: SessionLog<TItem>,
  callId: string,
  answer: ApprovalAnswerInput,
  defaultBy: () => string,
): EntryInput<TItem> {
  const approvals = log.state.approvals;
  const record = approvals.find((approval) => approval.callId === callId);
  const sessionId = log.sessionId;
  if (record === undefined) {
    const pending = approvals.filter(isAnswerable).map((approval) => approval.callId);
    throw new ApprovalNotFoundError({ sessionId, callId, pending });
  }
  if (record.childSessionId !== undefined) {
    throw new ApprovalDelegatedError({ sessionId, callId, childSessionId: record.childSessionId });
  }
  if (record.answer !== undefined) {
    throw new ApprovalAlreadyAnsweredError({ sessionId, record: { ...record, answer: record.answer } });
  }
  if (record.closed) throw new ApprovalNotPendingError({ sessionId, callId });
  return {
    kind: "approval_answered",
    call_id: callId,
    decision: answer.decision,
    ...(answer.reason === undefined ? {} : { reason: answer.reason }),
    by: answer.by ?? defaultBy(),
  } as EntryInput<TItem>;
}

/**
 * Answers the pending approval `callId` of session `sessionId` in `store`, from any process: the
 * answer is checked (`InvalidApprovalAnswerError`), the session's head segment read, and
 * `approval_answered` appended only if the segment did not change meanwhile. Of two answerers at
 * once exactly one is recorded; the other re-reads and gets `ApprovalAlreadyAnsweredError` naming
 * who answered and when. An unknown session is `NotFoundError`, an unknown call
 * `ApprovalNotFoundError`, a call closed without an answer `ApprovalNotPendingError`; none of them
 * writes anything. Resolves with the answered record and the log it was written through.
 */
export async function answerApproval<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
  callId: string,
  answer: unknown,
  options: SessionLogOptions<TItem> & {
    /** Who answers when the answer names nobody (default: the local user and host). */
    defaultBy?: () => string;
    /** A writer already on the session (a pod's): tried first, replaced by a fresh read if it is stale. */
    log?: SessionLog<TItem>;
  } = {},
): Promise<{ approval: ApprovalRecord; log: SessionLog<TItem> }> {
  const input = parseApprovalAnswer(answer);
  const { log } = await appendAsGuest(
    store,
    sessionId,
    (current) => ({
      entry: answerEntry(current, callId, input, options.defaultBy ?? localAnswerer),
      result: undefined,
    }),
    { ...options, ...(options.log === undefined ? {} : { first: options.log }) },
  );
  const approval = log.state.approvals.find((record) => record.callId === callId) as ApprovalRecord;
  return { approval, log };
}
