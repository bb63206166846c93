import { hasMarker, SessionStoreError } from "../errors.js";
import type { ApprovalRecord } from "../replay/session-state.js";

const NOT_FOUND_MARKER = Symbol.for("podkit.session-store.error.approval-not-found");

/** No approval was requested for this call id in the session's head segment. */
export class ApprovalNotFoundError extends SessionStoreError {
  readonly [NOT_FOUND_MARKER] = true;
  readonly sessionId: string;
  readonly callId: string;

  constructor(args: { sessionId: string; callId: string; pending: readonly string[] }) {
    const pending =
      args.pending.length === 0 ? "it has no pending approvals" : `pending: ${args.pending.join(", ")}`;
    super(
      `session ${args.sessionId} has no approval for call ${args.callId} (${pending}); nothing was written`,
      {
        hint: `\`podkit approve ${args.sessionId}\` lists the session's pending calls`,
      },
    );
    this.name = "ApprovalNotFoundError";
    this.sessionId = args.sessionId;
    this.callId = args.callId;
  }

  static override isInstance(value: unknown): value is ApprovalNotFoundError {
    return hasMarker(value, NOT_FOUND_MARKER);
  }
}

const ANSWERED_MARKER = Symbol.for("podkit.session-store.error.approval-already-answered");

/** The call was already answered (by someone else, or earlier): the first answer stands. */
export class ApprovalAlreadyAnsweredError extends SessionStoreError {
  readonly [ANSWERED_MARKER] = true;
  readonly callId: string;
  readonly decision: "allow" | "deny";
  /** Who gave the answer that stands, and when (epoch ms). */
  readonly by: string;
  readonly at: number;

  constructor(args: {
    sessionId: string;
    record: ApprovalRecord & { answer: NonNullable<ApprovalRecord["answer"]> };
  }) {
    const { record } = args;
    super(
      `call ${record.callId} of session ${args.sessionId} was already answered: ${record.answer.decision} by ` +
        `${record.answer.by} at ${new Date(record.answer.at).toISOString()}; nothing was written`,
      { hint: "an approval is answered once; the first answer stands" },
    );
    this.name = "ApprovalAlreadyAnsweredError";
    this.callId = record.callId;
    this.decision = record.answer.decision;
    this.by = record.answer.by;
    this.at = record.answer.at;
  }

  static override isInstance(value: unknown): value is ApprovalAlreadyAnsweredError {
    return hasMarker(value, ANSWERED_MARKER);
  }
}

const NOT_PENDING_MARKER = Symbol.for("podkit.session-store.error.approval-not-pending");

/** The call was closed without an answer (a new run closed it as interrupted): nothing waits for it. */
export class ApprovalNotPendingError extends SessionStoreError {
  readonly [NOT_PENDING_MARKER] = true;
  readonly callId: string;

  constructor(args: { sessionId: string; callId: string }) {
    super(
      `call ${args.callId} of session ${args.sessionId} is no longer pending: the session went on and closed it ` +
        "without an answer; nothing was written",
      { hint: "the model saw the call as interrupted; ask it again in a new turn if it is still wanted" },
    );
    this.name = "ApprovalNotPendingError";
    this.callId = args.callId;
  }

  static override isInstance(value: unknown): value is ApprovalNotPendingError {
    return hasMarker(value, NOT_PENDING_MARKER);
  }
}

const INVALID_MARKER = Symbol.for("podkit.session-store.error.invalid-approval-answer");

/** An answer that is not `{ decision: "allow" | "deny", reason?: string, by?: string }`. */
export class InvalidApprovalAnswerError extends SessionStoreError {
  readonly [INVALID_MARKER] = true;

  constructor(detail: string) {
    super(`invalid approval answer: ${detail}; nothing was written`, {
      hint: 'answer with { decision: "allow" | "deny", reason?: string, by?: string } (CLI: --allow or --deny)',
    });
    this.name = "InvalidApprovalAnswerError";
  }

  static override isInstance(value: unknown): value is InvalidApprovalAnswerError {
    return hasMarker(value, INVALID_MARKER);
  }
}
