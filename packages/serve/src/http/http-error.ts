import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * A request the server answers with a 4xx (or a 5xx it can explain): the status and a message for
 * the client. Thrown inside routes; `errorResponse` turns it into `{"error": …, "hint"?: …}`.
 * Never carries a stack trace to the client.
 */
export class HttpError extends Error {
  readonly status: ContentfulStatusCode;
  readonly hint: string | undefined;

  constructor(status: ContentfulStatusCode, message: string, hint?: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.hint = hint;
  }
}

/** The JSON error body every route answers with. */
export function errorResponse(c: Context, status: ContentfulStatusCode, message: string, hint?: string) {
  return c.json(hint === undefined ? { error: message } : { error: message, hint }, status);
}
