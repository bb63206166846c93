import type { ErrorKind } from "@podkit/llm-worker";

const MARKER = Symbol.for("podkit.pod.error");

/**
 * Base class of every error thrown by `@podkit/pod`. `isInstance()` recognises errors from
 * duplicated copies of the package through a `Symbol.for` marker, not `instanceof`; each
 * subclass has a marker of its own (see `hasMarker`).
 */
export class PodkitPodError extends Error {
  readonly [MARKER] = true;
  override name = "PodkitPodError";
  /** What the user can do about it, one line; the CLI prints it after the message. */
  readonly hint: string | undefined;
  /**
   * How a caller treats it (docs/errors.md, "Kinds"): a manifest, template or call to fix, unless
   * a class says otherwise.
   */
  readonly errorKind: ErrorKind = "usage";

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options?.hint;
  }

  /** True for any error thrown by this package, whichever copy of it threw. */
  static isInstance(error: unknown): error is PodkitPodError {
    return hasMarker(error, MARKER);
  }
}

const USAGE_MARKER = Symbol.for("podkit.pod.error.usage");

/** A `@podkit/pod` API was called wrongly (a programming error in the caller, not bad user files). */
export class PodUsageError extends PodkitPodError {
  readonly [USAGE_MARKER] = true;
  override name = "PodUsageError";

  static override isInstance(error: unknown): error is PodUsageError {
    return hasMarker(error, USAGE_MARKER);
  }
}

/**
 * True when `value` carries `marker`. Every error class of this package has its own
 * `Symbol.for("podkit.pod.error.<kind>")` marker and an `isInstance` built on this check, so
 * it works across duplicated copies of the package and never compares a mutable `name`.
 */
export function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}
