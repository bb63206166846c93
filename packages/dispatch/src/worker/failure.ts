import { type ErrorKind, errorKindOf } from "@podkit/llm-worker";
import type { RunError } from "../dispatcher.js";

/** How a failure is recorded for `podkit runs show`: the error's class name and message. */
export function runErrorOf(error: unknown): RunError {
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { type: "Error", message: String(error) };
}

/**
 * Whether a failed attempt of each kind of error is tried again (docs/errors.md, "Kinds"). A
 * wrong input or setup, a missing session and a damaged log fail the same way on every attempt,
 * so such a run is dead-lettered at once (no retry storm). A busy session clears when its other
 * writer is done; a transient failure may pass; a log written by a newer podkit is not damaged,
 * and during a rolling upgrade an upgraded worker can run it; a podkit bug may be a race. Those
 * are retried, a bounded number of times (`maxAttempts`).
 */
const RETRIED: Record<ErrorKind, boolean> = {
  usage: false,
  not_found: false,
  corrupt: false,
  conflict: true,
  transient: true,
  unsupported: true,
  internal: true,
};

/**
 * A failure no retry can fix, read off the error's kind. An error without one (a bare `Error`, a
 * crash in a tool, a podkit error from a release older than the kinds) is retried, as any unknown
 * failure is.
 */
export function isPermanentFailure(error: unknown): boolean {
  const kind = errorKindOf(error);
  return kind !== undefined && !RETRIED[kind];
}
