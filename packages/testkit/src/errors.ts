import type { ErrorKind } from "./error-kinds.js";

const BASE_MARKER = Symbol.for("podkit.testkit.error");

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by @podkit/testkit: a test set the double up wrongly. Each
 * subclass has its own `Symbol.for` marker, so `isInstance` works across duplicated copies of
 * the package and never depends on the (mutable) `name`.
 */
export class TestkitError extends Error {
  readonly [BASE_MARKER] = true;
  /** How a caller treats it (docs/errors.md, "Kinds"): a test to fix, unless a class says otherwise. */
  readonly errorKind: ErrorKind = "usage";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TestkitError";
  }

  /** True for any testkit error, including one thrown by another copy of this package. */
  static isInstance(error: unknown): error is TestkitError {
    return hasMarker(error, BASE_MARKER);
  }
}

const SCRIPT_MARKER = Symbol.for("podkit.testkit.error.script");

/** A scripted response or fault is malformed, or asks a wire for something it cannot send. */
export class ScriptError extends TestkitError {
  readonly [SCRIPT_MARKER] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ScriptError";
  }

  static override isInstance(error: unknown): error is ScriptError {
    return hasMarker(error, SCRIPT_MARKER);
  }
}

const OPTIONS_MARKER = Symbol.for("podkit.testkit.error.options");

/** A testkit function was called with an option it does not know (an unknown wire). */
export class OptionsError extends TestkitError {
  readonly [OPTIONS_MARKER] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OptionsError";
  }

  static override isInstance(error: unknown): error is OptionsError {
    return hasMarker(error, OPTIONS_MARKER);
  }
}

const LISTEN_MARKER = Symbol.for("podkit.testkit.error.listen");

/** The provider double could not listen on the requested host and port. */
export class ListenError extends TestkitError {
  readonly [LISTEN_MARKER] = true;
  /** The address is mostly taken by another process: not now, rather than wrong. */
  override readonly errorKind: ErrorKind = "conflict";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ListenError";
  }

  static override isInstance(error: unknown): error is ListenError {
    return hasMarker(error, LISTEN_MARKER);
  }
}

const RECORDING_MARKER = Symbol.for("podkit.testkit.error.recording");

/** A recorded stream could not be read. */
export class RecordingError extends TestkitError {
  readonly [RECORDING_MARKER] = true;
  readonly file: string;

  constructor(file: string, cause: unknown) {
    super(
      `cannot read recorded chunks ${file}: ${(cause as Error)?.message ?? String(cause)}; check the path (RECORDINGS_DIR holds the shipped ones)`,
      {
        cause,
      },
    );
    this.name = "RecordingError";
    this.file = file;
  }

  static override isInstance(error: unknown): error is RecordingError {
    return hasMarker(error, RECORDING_MARKER);
  }
}
