import { APICallError, JSONParseError, TypeValidationError } from "@ai-sdk/provider";
import { MalformedResponseError, ProviderError } from "../errors.js";

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

/** Error codes of a network failure as undici and Node's sockets report them. */
const NETWORK_CODE =
  /^(E[A-Z]+|UND_ERR_(SOCKET|CONNECT_TIMEOUT|HEADERS_TIMEOUT|BODY_TIMEOUT|CLOSED|RESPONSE_STATUS_CODE))$/;

function codeOf(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/**
 * A broken connection: undici's `fetch failed` / `terminated` TypeError with a network `cause`,
 * or a socket error itself. Any other TypeError is a bug or a parser crash, not a network fault.
 */
export function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (NETWORK_CODE.test(codeOf(error) ?? "")) return true;
  if (error instanceof TypeError) {
    return /^(fetch failed|terminated)$/.test(error.message) && NETWORK_CODE.test(codeOf(error.cause) ?? "");
  }
  return /terminated|socket|ECONNRESET|other side closed/i.test(error.message);
}

/** What a provider package's parser was reading when it crashed, from the JS error message. */
function crashedOn(error: Error, lastPartType: string | undefined): string {
  const property = /\((?:reading|setting) '([^']+)'\)/.exec(error.message)?.[1];
  const where = lastPartType === undefined ? "before the first stream part" : `after a ${lastPartType} part`;
  return property === undefined ? `the stream ${where}` : `the field "${property}" ${where}`;
}

/**
 * Turns whatever a provider call threw (or a stream's error part) into a `ProviderError` whose
 * `isRetryable` is decided here from data, not from the SDK: HTTP status, connection failure,
 * timeout, malformed frame, or an error event from the provider.
 */
export function toProviderError(
  error: unknown,
  provider: string,
  attempts = 1,
  lastPartType?: string,
): ProviderError {
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
    return new MalformedResponseError({
      provider,
      part: "a stream frame that is not the expected JSON",
      detail: messageOf(error).slice(0, 300),
      attempts,
      cause: error,
    });
  }
  if (isNetworkFailure(error)) {
    return new ProviderError(`${provider}: the connection broke: ${messageOf(error)}`, {
      kind: "connection",
      isRetryable: true,
      attempts,
      cause: error,
    });
  }
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError) {
    // The provider package's own parser threw while reading the stream (seen behind proxies).
    return new MalformedResponseError({
      provider,
      part: crashedOn(error, lastPartType),
      detail: error.message,
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
