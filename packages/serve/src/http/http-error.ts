import type { ErrorKind } from "@podkit/llm-worker";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { hasMarker, ServeError } from "../errors.js";

const HTTP_MARKER = Symbol.for("podkit.serve.error.http");

/**
 * A request the server answers with a 4xx (or a 5xx it can explain): the status and a message for
 * the client. Thrown inside routes; `errorResponse` turns it into `{"error": …, "hint"?: …}`.
 * Never carries a stack trace to the client. Its status is what the server answers; its
 * `errorKind` is read off the status, for any other reader.
 */
export class HttpError extends ServeError {
  readonly [HTTP_MARKER] = true;
  readonly status: ContentfulStatusCode;

  constructor(status: ContentfulStatusCode, message: string, hint?: string) {
    super(message, { ...(hint === undefined ? {} : { hint }), errorKind: kindOfStatus(status) });
    this.name = "HttpError";
    this.status = status;
  }

  static override isInstance(value: unknown): value is HttpError {
    return hasMarker(value, HTTP_MARKER);
  }
}

function kindOfStatus(status: number): ErrorKind {
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 429 || status === 503) return "transient";
  if (status === 501) return "unsupported";
  return status < 500 ? "usage" : "internal";
}

/** The JSON error body every route answers with. */
export function errorResponse(c: Context, status: ContentfulStatusCode, message: string, hint?: string) {
  return c.json(hint === undefined ? { error: message } : { error: message, hint }, status);
}
