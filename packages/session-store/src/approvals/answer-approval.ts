import { hostname, userInfo } from "node:os";
import { z } from "zod";
import { ApprovalDecisionSchema, type MinimalItem } from "../entry/entry-schema.js";
import { SessionBusyError } from "../errors.js";
import { SessionLog, type SessionLogOptions } from "../log/session-log.js";
import type { ApprovalRecord } from "../replay/session-state.js";
import type { Store } from "../store/store.js";
import {
  ApprovalAlreadyAnsweredError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  InvalidApprovalAnswerError,
} from "./approval-errors.js";

/** An answer to a pending approval; `by` defaults to the local user and host. */
export const ApprovalAnswerInputSchema = z.strictObject({
  decision: ApprovalDecisionSchema,
  reason: z.string().max(4000).optional(),
  by: z.string().min(1).max(200).optional(),
});
export type ApprovalAnswerInput = z.infer<typeof ApprovalAnswerInputSchema>;

/** Re-reads after a lost race before giving up with `SessionBusyError`. */
const MAX_ANSWER_ATTEMPTS = 5;

/** True while an approval waits for its answer. */
export function isPendingApproval(record: ApprovalRecord): boolean {
  return record.answer === undefined && !record.closed;
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
 * Records `answer` for `callId` in `log` if the call is pending and nobody else wrote to the
 * segment since `log` read it: `SessionBusyError` when someone did (nothing written; reopen and
 * look again), the approval errors when the call is unknown, answered or closed.
 */
export async function recordApprovalAnswer<TItem>(
  log: SessionLog<TItem>,
  callId: string,
  answer: ApprovalAnswerInput,
  defaultBy: () => string = localAnswerer,
): Promise<ApprovalRecord> {
  const approvals = log.state.approvals;
  const record = approvals.find((approval) => approval.callId === callId);
  const sessionId = log.sessionId;
  if (record === undefined) {
    const pending = approvals.filter(isPendingApproval).map((approval) => approval.callId);
    throw new ApprovalNotFoundError({ sessionId, callId, pending });
  }
  if (record.answer !== undefined) {
    throw new ApprovalAlreadyAnsweredError({ sessionId, record: { ...record, answer: record.answer } });
  }
  if (record.closed) throw new ApprovalNotPendingError({ sessionId, callId });
  await log.append(
    {
      kind: "approval_answered",
      call_id: callId,
      decision: answer.decision,
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      by: answer.by ?? defaultBy(),
    },
    { ifUnchanged: true },
  );
  return record;
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
  for (let attempt = 1; ; attempt++) {
    const log =
      attempt === 1 && options.log !== undefined
        ? options.log
        : await SessionLog.open(store, sessionId, options);
    try {
      await recordApprovalAnswer(log, callId, input, options.defaultBy);
      const approval = log.state.approvals.find((record) => record.callId === callId) as ApprovalRecord;
      return { approval, log };
    } catch (error) {
      if (!SessionBusyError.isInstance(error) || attempt >= MAX_ANSWER_ATTEMPTS) throw error;
    }
  }
}
