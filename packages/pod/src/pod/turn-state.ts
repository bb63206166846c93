import type { RunStatus } from "@podkit/session-store";

/**
 * The session's turn counters, owned here and changed only through these methods: completed turns
 * (restored from the log, advanced when an answer is final) and whether the last run may be
 * continued as it is by `resume()`.
 */
export class TurnState {
  constructor(
    private completed: number,
    private canResume: boolean,
  ) {}

  /** Completed turns of the session. */
  get turns(): number {
    return this.completed;
  }

  /** The last run ended paused, yielded, stopped by a budget or awaiting approval: `resume()` continues it. */
  get resumable(): boolean {
    return this.canResume;
  }

  /** The turn's answer is final: one more completed turn. Returns the new count. */
  finish(): number {
    this.completed += 1;
    return this.completed;
  }

  /** A run (or, mid-turn, the worker's part of it) ended with `status`. */
  ended(status: RunStatus): void {
    this.canResume =
      status === "paused" ||
      status === "yielded" ||
      status === "budget_exhausted" ||
      status === "awaiting_approval";
  }

  /** Both counters as a fresh read of the log has them (another process wrote to the session). */
  restore(completed: number, canResume: boolean): void {
    this.completed = completed;
    this.canResume = canResume;
  }

  /** The turn failed and was closed as interrupted: its open tool calls are never run again. */
  failed(): void {
    this.canResume = false;
  }
}
