import { PodBusyError } from "@podkit/pod";
import {
  ApprovalAlreadyAnsweredError,
  ApprovalNotFoundError,
  ApprovalNotPendingError,
  CorruptEntryError,
  InvalidApprovalAnswerError,
  NotFoundError,
  SessionBusyError,
} from "@podkit/session-store";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { hasMarker } from "../errors.js";
import { errorResponse, HttpError } from "./http-error.js";

/**
 * The response to an error a route threw: its own status for an `HttpError`, 404 for an unknown
 * session or approval, 400 for a malformed answer, 409 for a session that is running here (or
 * written by someone else meanwhile) and an approval no longer pending, the message of any other podkit error with a
 * 500, and for anything else a bare "internal error" (reported to `onUnexpected`). Never a stack.
 */
export function respondToError(c: Context, error: unknown, onUnexpected: (error: unknown) => void) {
  if (HttpError.isInstance(error)) return errorResponse(c, error.status, error.message, error.hint);
  if (NotFoundError.isInstance(error)) {
    return errorResponse(c, 404, `no such ${error.what}: ${error.id}`, "GET /sessions lists the sessions");
  }
  if (PodBusyError.isInstance(error)) return errorResponse(c, 409, error.message, error.hint);
  if (ApprovalNotFoundError.isInstance(error)) return errorResponse(c, 404, error.message, error.hint);
  if (InvalidApprovalAnswerError.isInstance(error)) return errorResponse(c, 400, error.message, error.hint);
  if (
    ApprovalAlreadyAnsweredError.isInstance(error) ||
    ApprovalNotPendingError.isInstance(error) ||
    SessionBusyError.isInstance(error)
  ) {
    return errorResponse(c, 409, error.message, error.hint);
  }
  if (CorruptEntryError.isInstance(error)) {
    return errorResponse(c, 500, `the session log has a corrupt entry (line ${error.line}): ${error.reason}`);
  }
  if (isPodkitError(error)) {
    const hint = (error as { hint?: unknown }).hint;
    return errorResponse(
      c,
      500 as ContentfulStatusCode,
      error.message,
      typeof hint === "string" ? hint : undefined,
    );
  }
  onUnexpected(error);
  return errorResponse(c, 500, "internal error", "the server's log has the details");
}

/** True for an error of any podkit package (a `Symbol.for("podkit.…")` marker). */
export function isPodkitError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  return Object.getOwnPropertySymbols(error).some(
    (symbol) => symbol.description?.startsWith("podkit.") && hasMarker(error, symbol),
  );
}
