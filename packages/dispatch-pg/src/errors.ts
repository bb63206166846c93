import { DispatchError, type ErrorKind } from "@podkit/dispatch";

const MARKER = Symbol.for("podkit.dispatch-pg.error.engine");

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * pg-boss refused an operation (a cron expression it cannot parse, a time zone it does not know,
 * a database it cannot reach at start). The message names what was asked and pg-boss's reason.
 * Its `errorKind` is `transient` (the database is the usual cause) unless the thrower knows
 * better: a refused schedule is the manifest's, `usage`.
 */
export class DispatchEngineError extends DispatchError {
  readonly [MARKER] = true;

  constructor(message: string, options?: { hint?: string; cause?: unknown; errorKind?: ErrorKind }) {
    super(message, { ...options, errorKind: options?.errorKind ?? "transient" });
    this.name = "DispatchEngineError";
  }

  static override isInstance(value: unknown): value is DispatchEngineError {
    return hasMarker(value, MARKER);
  }
}
