import { APICallError, JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import { ProviderError } from "../errors.js";

/** HTTP statuses worth retrying before the first event. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/** Why an attempt was abandoned by the worker's own watchdog. */
export class AttemptTimeout extends Error {
  override name = "AttemptTimeout";
  constructor(
    readonly phase: "first-event" | "idle",
    ms: number,
  ) {
    super(
      phase === "first-event"
        ? `no response from the provider within ${ms} ms`
        : `the response stream stalled for ${ms} ms`,
    );
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    const e = error as Record<string, unknown>;
    if (typeof e.message === "string") return e.message;
    const inner = e.error as Record<string, unknown> | undefined;
    if (inner && typeof inner.message === "string") return inner.message;
    try {
      return JSON.stringify(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}

/**
 * Turns whatever a provider call threw (or a stream's error part) into a `ProviderError` whose
 * `isRetryable` is decided here from data, not from the SDK: HTTP status, connection failure,
 * timeout, malformed frame, or an error event from the provider.
 */
export function toProviderError(error: unknown, provider: string, attempts = 1): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) {
      return new ProviderError(`${provider}: connection failed: ${error.message}`, {
        kind: "connection",
        isRetryable: true,
        attempts,
        cause: error,
      });
    }
    return new ProviderError(`${provider} answered HTTP ${status}: ${error.message}`, {
      kind: "http",
      status,
      isRetryable: isRetryableStatus(status),
      attempts,
      cause: error,
    });
  }
  if (error instanceof AttemptTimeout) {
    return new ProviderError(`${provider}: ${error.message}`, {
      kind: "timeout",
      isRetryable: true,
      attempts,
      cause: error,
    });
  }
  if (JSONParseError.isInstance(error) || TypeValidationError.isInstance(error)) {
    return new ProviderError(
      `${provider} sent a malformed stream frame (not the expected JSON): ${messageOf(error).slice(0, 300)}`,
      { kind: "malformed", isRetryable: false, attempts, cause: error },
    );
  }
  if (
    error instanceof TypeError ||
    (error instanceof Error && /terminated|socket|ECONNRESET|other side closed/i.test(error.message))
  ) {
    return new ProviderError(`${provider}: the connection broke: ${messageOf(error)}`, {
      kind: "connection",
      isRetryable: true,
      attempts,
      cause: error,
    });
  }
  const type = typeof error === "object" && error !== null ? (error as { type?: unknown }).type : undefined;
  const overloaded = type === "overloaded_error" || type === "api_error" || type === "rate_limit_error";
  return new ProviderError(`${provider} reported an error in the stream: ${messageOf(error)}`, {
    kind: "stream",
    isRetryable: overloaded || type === undefined,
    attempts,
    cause: error,
  });
}
