import { type ErrorKind, errorKindOf } from "@podkit/llm-worker";
import { CorruptEntryError, NotFoundError } from "@podkit/session-store";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { hasMarker } from "../errors.js";
import { errorResponse, HttpError } from "./http-error.js";

/**
 * The status each kind of podkit error answers with (docs/errors.md, "Kinds"). Damage to the
 * store is the server's trouble, not the request's, so `corrupt` is a 500 rather than a 422;
 * `unsupported` is a 501: this server cannot serve it, an upgraded one can.
 */
const STATUS_OF_KIND: Record<ErrorKind, ContentfulStatusCode> = {
  usage: 400,
  not_found: 404,
  conflict: 409,
  corrupt: 500,
  transient: 503,
  unsupported: 501,
  internal: 500,
};

/**
 * The response to an error a route threw: its own status for an `HttpError`, else the status of
 * the error's kind with its message and hint — an unknown session or approval 404, a malformed
 * answer 400, a session running here (or written by someone else meanwhile) or an approval no
 * longer pending 409. A podkit error of kind `internal` is also reported to `onUnexpected`; a
 * podkit error without a kind (an older copy) is a 500 with its message, and anything else a bare
 * "internal error" (reported to `onUnexpected`). Never a stack.
 */
export function respondToError(c: Context, error: unknown, onUnexpected: (error: unknown) => void) {
  if (HttpError.isInstance(error)) return errorResponse(c, error.status, error.message, error.hint);
  // These two name the server's files in their messages; the client gets what it can use.
  if (NotFoundError.isInstance(error)) {
    return errorResponse(c, 404, `no such ${error.what}: ${error.id}`, "GET /sessions lists the sessions");
  }
  if (CorruptEntryError.isInstance(error)) {
    return errorResponse(c, 500, `the session log has a corrupt entry (line ${error.line}): ${error.reason}`);
  }
  if (!isPodkitError(error)) {
    onUnexpected(error);
    return errorResponse(c, 500, "internal error", "the server's log has the details");
  }
  const kind = errorKindOf(error);
  if (kind === "internal") onUnexpected(error);
  const hint = (error as { hint?: unknown }).hint;
  return errorResponse(
    c,
    kind === undefined ? 500 : STATUS_OF_KIND[kind],
    error.message,
    typeof hint === "string" ? hint : undefined,
  );
}

/** True for an error of any podkit package (a `Symbol.for("podkit.…")` marker). */
export function isPodkitError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  return Object.getOwnPropertySymbols(error).some(
    (symbol) => symbol.description?.startsWith("podkit.") && hasMarker(error, symbol),
  );
}
