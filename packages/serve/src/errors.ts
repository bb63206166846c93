import type { ErrorKind } from "@podkit/llm-worker";

const BASE_MARKER = Symbol.for("podkit.serve.error");
const TOKEN_MARKER = Symbol.for("podkit.serve.error.token-required");
const USAGE_MARKER = Symbol.for("podkit.serve.error.usage");

/** The one place `@podkit/serve` reads a `Symbol.for` marker: its own errors and every podkit package's. */
export function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error `@podkit/serve` throws. `isInstance` works across duplicated copies of
 * the package because it checks a `Symbol.for` marker, not the prototype.
 */
export class ServeError extends Error {
  readonly [BASE_MARKER] = true;
  /** What to do about it, one line. */
  readonly hint: string | undefined;
  /** How a caller treats it (docs/errors.md, "Kinds"): a server set up wrongly, unless a class says otherwise. */
  readonly errorKind: ErrorKind;

  constructor(message: string, options?: { hint?: string; cause?: unknown; errorKind?: ErrorKind }) {
    super(message, { cause: options?.cause });
    this.name = "ServeError";
    this.hint = options?.hint;
    this.errorKind = options?.errorKind ?? "usage";
  }

  static isInstance(value: unknown): value is ServeError {
    return hasMarker(value, BASE_MARKER);
  }
}

/**
 * The server was asked to listen on an address other machines can reach without a token: it
 * refuses to start rather than hand every session and run to the network.
 */
export class ServeTokenRequiredError extends ServeError {
  readonly [TOKEN_MARKER] = true;
  readonly host: string;

  constructor(host: string) {
    super(
      `refusing to listen on ${host} without a token: anyone who reaches it could read and run every session`,
      {
        hint: "set PODKIT_SERVE_TOKEN to a long random secret (clients send `Authorization: Bearer <token>`) or give holders their own (--tokens-file), or bind to 127.0.0.1",
      },
    );
    this.name = "ServeTokenRequiredError";
    this.host = host;
  }

  static override isInstance(value: unknown): value is ServeTokenRequiredError {
    return hasMarker(value, TOKEN_MARKER);
  }
}

/** The server was configured wrongly in code or on the command line (a port out of range, a bad origin). */
export class ServeUsageError extends ServeError {
  readonly [USAGE_MARKER] = true;

  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options);
    this.name = "ServeUsageError";
  }

  static override isInstance(value: unknown): value is ServeUsageError {
    return hasMarker(value, USAGE_MARKER);
  }
}
