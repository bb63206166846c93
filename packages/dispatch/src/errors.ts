import type { ErrorKind } from "@podkit/llm-worker";

const BASE_MARKER = Symbol.for("podkit.dispatch.error");

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by `@podkit/dispatch` and its adapters. `isInstance` checks a
 * `Symbol.for` marker, so it works across duplicated copies of the package.
 */
export class DispatchError extends Error {
  readonly [BASE_MARKER] = true;
  /** What to do about it, one line. */
  readonly hint: string | undefined;
  /**
   * How a caller treats it (docs/errors.md, "Kinds"). Each class sets its own; a bare
   * `DispatchError` is mostly a run's lease or session changing under it (and the reason a
   * stopping worker aborts its runs with, which hands them back), so `conflict` unless the thrower
   * says otherwise.
   */
  readonly errorKind: ErrorKind;

  constructor(message: string, options?: { hint?: string; cause?: unknown; errorKind?: ErrorKind }) {
    super(message, { cause: options?.cause });
    this.name = "DispatchError";
    this.hint = options?.hint;
    this.errorKind = options?.errorKind ?? "conflict";
  }

  static isInstance(value: unknown): value is DispatchError {
    return hasMarker(value, BASE_MARKER);
  }
}

const RUNNING_MARKER = Symbol.for("podkit.dispatch.error.session-running");

/**
 * A run was submitted to a session that a worker is running now. The session log has one writer:
 * the input is not committed while another machine writes the session.
 */
export class SessionRunningError extends DispatchError {
  readonly [RUNNING_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  readonly sessionId: string;
  readonly runningRunId: string;

  constructor(args: { sessionId: string; runningRunId: string }) {
    super(`session ${args.sessionId} is being run by run ${args.runningRunId} on a worker`, {
      hint: `submit again when it has ended (\`podkit runs show ${args.runningRunId}\`), or start a new session`,
    });
    this.name = "SessionRunningError";
    this.sessionId = args.sessionId;
    this.runningRunId = args.runningRunId;
  }

  static override isInstance(value: unknown): value is SessionRunningError {
    return hasMarker(value, RUNNING_MARKER);
  }
}

const INPUT_MARKER = Symbol.for("podkit.dispatch.error.run-input");

/**
 * The entry a job points at is not this run's "submitted" entry: the job or the log was tampered
 * with or belongs to another store. No retry can fix it, so the run is dead-lettered.
 */
export class RunInputError extends DispatchError {
  readonly [INPUT_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  readonly runId: string;
  /** `<session>/<segment>:<index>` of the entry the job named. */
  readonly at: string;

  constructor(args: { runId: string; at: string; problem: string }) {
    super(`run ${args.runId}: the input entry ${args.at} is unusable: ${args.problem}`, {
      hint: "the job does not match the session log; submit the run again",
    });
    this.name = "RunInputError";
    this.runId = args.runId;
    this.at = args.at;
  }

  static override isInstance(value: unknown): value is RunInputError {
    return hasMarker(value, INPUT_MARKER);
  }
}

const UNKNOWN_RUN_MARKER = Symbol.for("podkit.dispatch.error.unknown-run");

/** A run id the dispatcher does not know. */
export class UnknownRunError extends DispatchError {
  readonly [UNKNOWN_RUN_MARKER] = true;
  override readonly errorKind: ErrorKind = "not_found";
  readonly runId: string;

  constructor(runId: string) {
    super(`no run ${runId}`, { hint: "`podkit runs list` shows the runs" });
    this.name = "UnknownRunError";
    this.runId = runId;
  }

  static override isInstance(value: unknown): value is UnknownRunError {
    return hasMarker(value, UNKNOWN_RUN_MARKER);
  }
}

const STATE_MARKER = Symbol.for("podkit.dispatch.error.run-state");

/** An operation the run's state does not allow (requeue of a run that is not awaiting approval). */
export class RunStateError extends DispatchError {
  readonly [STATE_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  readonly runId: string;
  readonly state: string;

  constructor(args: { runId: string; state: string; wanted: string }) {
    super(`run ${args.runId} is ${args.state}; ${args.wanted}`);
    this.name = "RunStateError";
    this.runId = args.runId;
    this.state = args.state;
  }

  static override isInstance(value: unknown): value is RunStateError {
    return hasMarker(value, STATE_MARKER);
  }
}

const LEASE_MARKER = Symbol.for("podkit.dispatch.error.lease-lost");

/**
 * A worker's lease on a run ended (its heartbeat was missed and another worker may hold the run
 * now, or the run was cancelled): the session write it tried was refused.
 */
export class LeaseLostError extends DispatchError {
  readonly [LEASE_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  readonly runId: string;

  constructor(runId: string, reason: unknown) {
    super(`run ${runId}: this worker's lease has ended (${String(reason)}); nothing more is written`);
    this.name = "LeaseLostError";
    this.runId = runId;
  }

  static override isInstance(value: unknown): value is LeaseLostError {
    return hasMarker(value, LEASE_MARKER);
  }
}

const POD_MARKER = Symbol.for("podkit.dispatch.error.unknown-pod");

/** A run names a pod this worker has no manifest for. */
export class UnknownPodError extends DispatchError {
  readonly [POD_MARKER] = true;
  /** The worker's configuration lacks the pod: no retry on this worker can run it. */
  override readonly errorKind: ErrorKind = "usage";
  readonly pod: string;

  constructor(pod: string, known: readonly string[]) {
    super(
      `no manifest for pod "${pod}" on this worker (it serves ${known.map((k) => `"${k}"`).join(", ")})`,
      {
        hint: "start a worker with that pod's manifest (`podkit worker --manifest <file>`)",
      },
    );
    this.name = "UnknownPodError";
    this.pod = pod;
  }

  static override isInstance(value: unknown): value is UnknownPodError {
    return hasMarker(value, POD_MARKER);
  }
}

const CANCELLED_MARKER = Symbol.for("podkit.dispatch.error.run-cancelled");

/** The reason a claim's `signal` aborts with when its run was cancelled (`podkit runs cancel`). */
export class RunCancelledError extends DispatchError {
  readonly [CANCELLED_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  readonly runId: string;

  constructor(runId: string) {
    super(`run ${runId} was cancelled`);
    this.name = "RunCancelledError";
    this.runId = runId;
  }

  static override isInstance(value: unknown): value is RunCancelledError {
    return hasMarker(value, CANCELLED_MARKER);
  }
}
