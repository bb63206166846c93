import type { ErrorKind } from "../error-kinds.js";
import { hasMarker, SessionStoreError } from "../errors.js";
import type { ApprovalRecord } from "../replay/session-state.js";

const NOT_FOUND_MARKER = Symbol.for("podkit.session-store.error.approval-not-found");

/** No approval was requested for this call id in the session's head segment. */
export class ApprovalNotFoundError extends SessionStoreError {
  readonly [NOT_FOUND_MARKER] = true;
  override readonly errorKind: ErrorKind = "not_found";
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
  override readonly errorKind: ErrorKind = "conflict";
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
  override readonly errorKind: ErrorKind = "conflict";
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
  override readonly errorKind: ErrorKind = "usage";

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

const DELEGATED_MARKER = Symbol.for("podkit.session-store.error.approval-delegated");

/**
 * The call waits on the approvals of a child session (a sub-pod's call its foreground run stopped
 * on): it is never answered itself; the person answers the child's calls.
 */
export class ApprovalDelegatedError extends SessionStoreError {
  readonly [DELEGATED_MARKER] = true;
  /** The call's state (waiting on its child) does not take an answer, as an answered one does not. */
  override readonly errorKind: ErrorKind = "conflict";
  readonly callId: string;
  readonly childSessionId: string;

  constructor(args: { sessionId: string; callId: string; childSessionId: string }) {
    super(
      `call ${args.callId} of session ${args.sessionId} waits on the approvals of its child session ${args.childSessionId}; it is not answered itself, nothing was written`,
      { hint: `answer the child's calls: \`podkit approvals\` lists them (or answer them from the root)` },
    );
    this.name = "ApprovalDelegatedError";
    this.callId = args.callId;
    this.childSessionId = args.childSessionId;
  }

  static override isInstance(value: unknown): value is ApprovalDelegatedError {
    return hasMarker(value, DELEGATED_MARKER);
  }
}
