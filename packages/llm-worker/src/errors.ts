import { type ErrorKind, errorKindOf, hasMarker } from "./error-kinds.js";
import type { StopReason } from "./stream/stop-reason.js";

const BASE_MARKER = Symbol.for("podkit.llm-worker.error");

/**
 * Base class of every error thrown by `@podkit/llm-worker`. `isInstance()` recognises errors
 * from duplicated copies of the package through a `Symbol.for` marker, not `instanceof`; each
 * subclass has its own marker, so no error is ever identified by its (mutable) `name`.
 */
export class LlmWorkerError extends Error {
  readonly [BASE_MARKER] = true;
  /** What the user can do about it, one line; the CLI prints it after the message. */
  readonly hint: string | undefined;
  /**
   * How a caller treats it (docs/errors.md, "Kinds"). A class whose failures are all of one kind
   * fixes it; one whose kind depends on the failure (a provider's status, a cause) passes it
   * here. Otherwise `usage`: most of this package's failures are a setup to fix.
   */
  readonly errorKind: ErrorKind;

  constructor(message: string, options?: { cause?: unknown; hint?: string; errorKind?: ErrorKind }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "LlmWorkerError";
    this.hint = options?.hint;
    this.errorKind = options?.errorKind ?? "usage";
  }

  /** True for any error thrown by this package, whichever copy of it threw. */
  static isInstance(error: unknown): error is LlmWorkerError {
    return hasMarker(error, BASE_MARKER);
  }
}

/** What went wrong on the provider side of a request. */
export type ProviderErrorKind =
  | "http"
  | "connection"
  | "timeout"
  | "malformed"
  | "stream"
  | "continuation"
  | "empty";

const PROVIDER_MARKER = Symbol.for("podkit.llm-worker.error.provider");

/**
 * A model request failed. `status` is the HTTP status when there was one; `isRetryable` is
 * derived from the status (408/409/425/429/5xx/529) or the failure kind, and says whether
 * trying again later could succeed (it has already been retried as far as the policy allows).
 * Its `errorKind` follows: `transient` when retryable, else `usage` (a refused key, an unknown
 * model, a request the provider rejects: the same request fails the same way).
 */
export class ProviderError extends LlmWorkerError {
  readonly [PROVIDER_MARKER] = true;
  readonly status: number | undefined;
  readonly isRetryable: boolean;
  readonly kind: ProviderErrorKind;
  readonly attempts: number;

  constructor(
    message: string,
    options: {
      status?: number;
      isRetryable: boolean;
      kind: ProviderErrorKind;
      attempts?: number;
      cause?: unknown;
      hint?: string;
    },
  ) {
    super(message, {
      cause: options.cause,
      hint: options.hint ?? providerHint(options),
      errorKind: options.isRetryable ? "transient" : "usage",
    });
    this.name = "ProviderError";
    this.status = options.status;
    this.isRetryable = options.isRetryable;
    this.kind = options.kind;
    this.attempts = options.attempts ?? 1;
  }

  static override isInstance(error: unknown): error is ProviderError {
    return hasMarker(error, PROVIDER_MARKER);
  }
}

/** What to do about a failed request, from what is known of the failure. */
function providerHint(failure: { status?: number; kind: ProviderErrorKind; isRetryable: boolean }): string {
  if (failure.status === 401 || failure.status === 403)
    return "the provider refused the API key: check the variable [model] api_key_env names";
  if (failure.status === 404)
    return "the provider does not know this model or endpoint: check [model] ref and base_url";
  if (failure.kind === "connection")
    return "nothing answered at the model's endpoint: is the server at [model] base_url running?";
  return failure.isRetryable
    ? "the provider failed after the retries; run again later (`podkit resume <session>` keeps the conversation)"
    : "the provider rejected the request; rerun with --debug for its full answer";
}

const MALFORMED_MARKER = Symbol.for("podkit.llm-worker.error.malformed-response");

/**
 * The provider sent something its AI SDK package could not read: a frame that is not the
 * expected JSON, or a stream whose parser crashed (a proxy that dropped or reordered events).
 * Never retried: the same bytes would break the same way. `part` names what could not be read.
 */
export class MalformedResponseError extends ProviderError {
  readonly [MALFORMED_MARKER] = true;
  readonly provider: string;
  readonly part: string;

  constructor(args: { provider: string; part: string; detail: string; attempts?: number; cause?: unknown }) {
    super(
      `${args.provider} sent a response its parser could not read (${args.part}): ${args.detail}. ` +
        "This is not a network failure and was not retried; check any proxy or gateway in front of the provider.",
      {
        kind: "malformed",
        isRetryable: false,
        attempts: args.attempts,
        cause: args.cause,
        hint: "the response was not retried; check any proxy or gateway in front of the provider",
      },
    );
    this.name = "MalformedResponseError";
    this.provider = args.provider;
    this.part = args.part;
  }

  static override isInstance(error: unknown): error is MalformedResponseError {
    return hasMarker(error, MALFORMED_MARKER);
  }
}

const TOOL_MARKER = Symbol.for("podkit.llm-worker.error.tool");

/**
 * A tool could not be registered or materialized (duplicate name, registration after the tool
 * server was locked, a factory that threw or returned something that is not a tool).
 */
export class ToolError extends LlmWorkerError {
  readonly [TOOL_MARKER] = true;
  readonly toolName: string | undefined;

  constructor(message: string, options?: { toolName?: string; cause?: unknown; hint?: string }) {
    super(message, {
      cause: options?.cause,
      hint:
        options?.hint ?? "check [tools] and [[mcp.server]] in the manifest: two tools may not share a name",
    });
    this.name = "ToolError";
    this.toolName = options?.toolName;
  }

  static override isInstance(error: unknown): error is ToolError {
    return hasMarker(error, TOOL_MARKER);
  }
}

const ABORTED_MARKER = Symbol.for("podkit.llm-worker.error.aborted");

/** The caller's `AbortSignal` fired; the run stopped and committed no partial output. */
export class AbortedError extends LlmWorkerError {
  readonly [ABORTED_MARKER] = true;
  /** Stopped from outside, not failed: run again, it may finish (a stopping worker hands it back). */
  override readonly errorKind: ErrorKind = "transient";

  constructor(message = "the run was aborted", options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AbortedError";
  }

  static override isInstance(error: unknown): error is AbortedError {
    return hasMarker(error, ABORTED_MARKER);
  }
}

const CANCELLED_MARKER = Symbol.for("podkit.llm-worker.error.cancelled");

/** An interceptor decision (`preRequest` cancel, `preToolCall`/`postToolCall` abort) stopped the run. */
export class CancelledError extends LlmWorkerError {
  readonly [CANCELLED_MARKER] = true;
  readonly reason: string | undefined;

  constructor(reason?: string) {
    super(reason ? `the run was cancelled: ${reason}` : "the run was cancelled");
    this.name = "CancelledError";
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is CancelledError {
    return hasMarker(error, CANCELLED_MARKER);
  }
}

const HISTORY_APPEND_MARKER = Symbol.for("podkit.llm-worker.error.history-append");

/**
 * `onHistoryAppend` rejected: the item was not used and the turn stopped. Its `errorKind` is its
 * cause's (a store's busy session, damaged log, failed write), else `transient`.
 */
export class HistoryAppendError extends LlmWorkerError {
  readonly [HISTORY_APPEND_MARKER] = true;

  constructor(itemType: string, cause: unknown) {
    super(
      `could not persist a ${itemType} item (onHistoryAppend failed: ${cause instanceof Error ? cause.message : String(cause)}); the turn stopped before using it`,
      { cause, errorKind: errorKindOf(cause) ?? "transient" },
    );
    this.name = "HistoryAppendError";
  }

  static override isInstance(error: unknown): error is HistoryAppendError {
    return hasMarker(error, HISTORY_APPEND_MARKER);
  }
}

const CONFIGURATION_MARKER = Symbol.for("podkit.llm-worker.error.configuration");

/** Bad configuration: an unknown provider in a model ref, a missing API key or base URL, a bad setting. */
export class ConfigurationError extends LlmWorkerError {
  readonly [CONFIGURATION_MARKER] = true;

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, {
      cause: options?.cause,
      hint:
        options?.hint ?? "check [model] in the manifest (`podkit manifest show` prints what it resolves to)",
    });
    this.name = "ConfigurationError";
  }

  static override isInstance(error: unknown): error is ConfigurationError {
    return hasMarker(error, CONFIGURATION_MARKER);
  }
}

const BUSY_MARKER = Symbol.for("podkit.llm-worker.error.worker-busy");

/** A method that changes what a run works with was called while a run was in progress. */
export class WorkerBusyError extends LlmWorkerError {
  readonly [BUSY_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  readonly method: string;

  constructor(method: string) {
    super(
      `${method}() is not allowed while a run is in progress: await the run (or abort it) and call ${method}() afterwards`,
    );
    this.name = "WorkerBusyError";
    this.method = method;
  }

  static override isInstance(error: unknown): error is WorkerBusyError {
    return hasMarker(error, BUSY_MARKER);
  }
}

const EMPTY_MARKER = Symbol.for("podkit.llm-worker.error.empty-response");

/**
 * The model ended a response with nothing in it and a stop reason that says it failed: `length`
 * (the output limit was hit before any content) or `error`. Such a response is not an answer,
 * so the run does not finish with it.
 */
export class EmptyResponseError extends ProviderError {
  readonly [EMPTY_MARKER] = true;
  readonly stopReason: StopReason;

  constructor(provider: string, stopReason: StopReason) {
    const raw = stopReason.raw === undefined ? "" : ` (provider value "${stopReason.raw}")`;
    super(
      stopReason.kind === "length"
        ? `${provider} ended the response at its output limit before producing an answer${raw}; raise max_tokens (or lower the reasoning budget) and run again`
        : `${provider} ended the response with an error and no content${raw}; the request can be tried again`,
      {
        kind: "empty",
        isRetryable: stopReason.kind !== "length",
        hint:
          stopReason.kind === "length"
            ? "raise [worker] max_tokens (or lower [worker] reasoning) and run again"
            : "run again (`podkit resume <session>` keeps the conversation)",
      },
    );
    this.name = "EmptyResponseError";
    this.stopReason = stopReason;
  }

  static override isInstance(error: unknown): error is EmptyResponseError {
    return hasMarker(error, EMPTY_MARKER);
  }
}

const MEDIA_NOT_FOUND_MARKER = Symbol.for("podkit.llm-worker.error.media-not-found");

/**
 * A `MediaStore` holds no bytes under a digest history names (docs/media.md): a worker's memory
 * store after a restart, or a blob removed from the session store. The worker sends a note in
 * the part's place and goes on.
 */
export class MediaNotFoundError extends LlmWorkerError {
  readonly [MEDIA_NOT_FOUND_MARKER] = true;
  override readonly errorKind: ErrorKind = "not_found";
  readonly digest: string;

  constructor(digest: string, where: string, options?: { cause?: unknown }) {
    super(`no media part ${digest} in ${where}`, {
      cause: options?.cause,
      hint: "a worker without a persistent media store keeps media in memory only; give it the store its history's media were stored in",
    });
    this.name = "MediaNotFoundError";
    this.digest = digest;
  }

  static override isInstance(error: unknown): error is MediaNotFoundError {
    return hasMarker(error, MEDIA_NOT_FOUND_MARKER);
  }
}
