import {
  CorruptEntryError,
  NotFoundError,
  ReplayError,
  SessionStoreUsageError,
  UnsupportedFormatError,
} from "@podkit/session-store";
import type { RunError } from "../dispatcher.js";
import { RunInputError, UnknownPodError } from "../errors.js";

/** How a failure is recorded for `podkit runs show`: the error's class name and message. */
export function runErrorOf(error: unknown): RunError {
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { type: "Error", message: String(error) };
}

/**
 * A failure no retry can fix: the session is missing or corrupt, written by a newer podkit, the
 * job does not match the log, or no manifest serves the pod. Such a run is dead-lettered at once
 * instead of failing the same way on every attempt (no retry storm). Anything else — a provider
 * error, a lost database connection, a pod that crashed — is retried, a bounded number of times.
 */
export function isPermanentFailure(error: unknown): boolean {
  return (
    NotFoundError.isInstance(error) ||
    CorruptEntryError.isInstance(error) ||
    UnsupportedFormatError.isInstance(error) ||
    ReplayError.isInstance(error) ||
    SessionStoreUsageError.isInstance(error) ||
    RunInputError.isInstance(error) ||
    UnknownPodError.isInstance(error)
  );
}
