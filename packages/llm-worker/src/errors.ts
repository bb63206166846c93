const MARKER = Symbol.for("podkit.llm-worker.error");

/**
 * Base class of every error thrown by `@podkit/llm-worker`. `isInstance()` recognises errors
 * from duplicated copies of the package through a `Symbol.for` marker, not `instanceof`.
 */
export class LlmWorkerError extends Error {
  readonly [MARKER] = true;
  override name = "LlmWorkerError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }

  /** True for any error thrown by this package, whichever copy of it threw. */
  static isInstance(error: unknown): error is LlmWorkerError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** What went wrong on the provider side of a request. */
export type ProviderErrorKind = "http" | "connection" | "timeout" | "malformed" | "stream" | "continuation";

/**
 * A model request failed. `status` is the HTTP status when there was one; `isRetryable` is
 * derived from the status (408/409/425/429/5xx/529) or the failure kind, and says whether
 * trying again later could succeed (it has already been retried as far as the policy allows).
 */
export class ProviderError extends LlmWorkerError {
  override name = "ProviderError";
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
    },
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.isRetryable = options.isRetryable;
    this.kind = options.kind;
    this.attempts = options.attempts ?? 1;
  }

  static override isInstance(error: unknown): error is ProviderError {
    return LlmWorkerError.isInstance(error) && error.name === "ProviderError";
  }
}

/**
 * A tool could not be registered or materialized (duplicate name, registration after the tool
 * server was locked, a factory that threw or returned something that is not a tool).
 */
export class ToolError extends LlmWorkerError {
  override name = "ToolError";
  readonly toolName: string | undefined;

  constructor(message: string, options?: { toolName?: string; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.toolName = options?.toolName;
  }

  static override isInstance(error: unknown): error is ToolError {
    return LlmWorkerError.isInstance(error) && error.name === "ToolError";
  }
}

/** The caller's `AbortSignal` fired; the run stopped and committed no partial output. */
export class AbortedError extends LlmWorkerError {
  override name = "AbortedError";

  constructor(message = "the run was aborted", options?: { cause?: unknown }) {
    super(message, options);
  }

  static override isInstance(error: unknown): error is AbortedError {
    return LlmWorkerError.isInstance(error) && error.name === "AbortedError";
  }
}

/** An interceptor decision (`preRequest` cancel, `preToolCall`/`postToolCall` abort) stopped the run. */
export class CancelledError extends LlmWorkerError {
  override name = "CancelledError";
  readonly reason: string | undefined;

  constructor(reason?: string) {
    super(reason ? `the run was cancelled: ${reason}` : "the run was cancelled");
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is CancelledError {
    return LlmWorkerError.isInstance(error) && error.name === "CancelledError";
  }
}

/** `onHistoryAppend` rejected: the item was not used and the turn stopped. */
export class HistoryAppendError extends LlmWorkerError {
  override name = "HistoryAppendError";

  constructor(itemType: string, cause: unknown) {
    super(
      `could not persist a ${itemType} item (onHistoryAppend failed: ${cause instanceof Error ? cause.message : String(cause)}); the turn stopped before using it`,
      { cause },
    );
  }

  static override isInstance(error: unknown): error is HistoryAppendError {
    return LlmWorkerError.isInstance(error) && error.name === "HistoryAppendError";
  }
}

/** Bad configuration: an unknown provider in a model ref, a missing API key or base URL, a bad setting. */
export class ConfigurationError extends LlmWorkerError {
  override name = "ConfigurationError";

  static override isInstance(error: unknown): error is ConfigurationError {
    return LlmWorkerError.isInstance(error) && error.name === "ConfigurationError";
  }
}
