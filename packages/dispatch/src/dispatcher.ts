// The seam between podkit and a job-queue engine (docs/dispatch.md). An adapter rides an
// existing engine — leases, heartbeats, retries, dead-lettering and cron are the engine's — and
// carries ids and offsets only: a run's input lives in the session log, at `RunJob.input`.

/**
 * Where a run's `dispatch.run` "submitted" entry is: the segment and 0-based index of the entry
 * that holds the input. Segments are never rewritten behind that index, so the address is stable.
 */
export interface EntryRef {
  readonly segmentId: string;
  readonly index: number;
}

/** What the queue carries for one run: ids and an offset, never the prompt or a result. */
export interface RunJob {
  /** The run's id (UUID); with an idempotency key, derived from the key. */
  readonly runId: string;
  /** The pod that runs it: a manifest's `[pod] name`, served by the workers that load that manifest. */
  readonly pod: string;
  readonly sessionId: string;
  /** The entry holding the run's input. */
  readonly input: EntryRef;
}

/**
 * Where a run stands. `retrying`: an attempt failed (or its worker died) and the run waits for
 * the next; `dead`: attempts exhausted or a failure no retry can fix, dead-lettered with `error`;
 * `awaiting_approval`: the run stopped for a person's answer and holds no worker until `requeue`.
 */
export type RunState =
  | "queued"
  | "running"
  | "retrying"
  | "completed"
  | "awaiting_approval"
  | "cancelled"
  | "dead";

/** States a run never leaves by itself (`awaiting_approval` leaves through `requeue`). */
export const FINAL_RUN_STATES: readonly RunState[] = ["completed", "cancelled", "dead"];

/** Why an attempt failed, as recorded for `podkit runs show`: the error's class name and message. */
export interface RunError {
  readonly type: string;
  readonly message: string;
}

/** A run as the dispatcher knows it. */
export interface RunInfo extends RunJob {
  readonly state: RunState;
  /** Attempts started so far (a retry after a dead worker counts as one). */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly submittedAt: Date;
  /** When the latest attempt started. */
  readonly startedAt?: Date;
  /** When the run reached a final state (or `awaiting_approval`). */
  readonly endedAt?: Date;
  /** The stop reason of a completed run (`finished`, `limit_reached`, …). */
  readonly result?: string;
  /**
   * The typed answer of a completed run whose pod has an output schema (docs/output.md): the value
   * its `final_answer` gave, checked against the schema. Absent for a run without one.
   */
  readonly output?: unknown;
  /** The last failure: the dead-letter reason of a dead run, the cause of a retry. */
  readonly error?: RunError;
}

/** A `[[schedule]]` entry of a pod: the engine's cron fires it; each firing becomes an ordinary run. */
export interface ScheduleSpec {
  readonly pod: string;
  /** Unique per pod. */
  readonly name: string;
  readonly cron: string;
  /** IANA time zone of the expression (default UTC). */
  readonly tz?: string;
}

/** One firing of a schedule, claimed like a run; its worker turns it into a run. */
export interface ScheduleFiring {
  readonly pod: string;
  readonly schedule: string;
  /** Unique per firing: the run it becomes is derived from it, so a retried firing runs once. */
  readonly firingId: string;
}

/** How an attempt ended well. */
export type ClaimOutcome =
  | { readonly state: "completed"; readonly result: string; readonly output?: unknown }
  | { readonly state: "awaiting_approval" };

/**
 * A leased unit of work: a run's attempt, or a schedule firing. The adapter keeps the lease alive
 * while the claim is open (the engine's heartbeat). Every claim is settled exactly once — by
 * `complete`, `fail` or `release` — whatever happened to it: settling is what frees the worker's
 * slot for the next claim. Settling a claim whose run was cancelled or whose lease was lost changes
 * nothing in the engine (it has settled the run already, or another attempt holds it) and only
 * frees that slot.
 */
export interface Claim {
  readonly work:
    | { readonly kind: "run"; readonly run: RunJob }
    | ({ readonly kind: "firing" } & ScheduleFiring);
  /** 1-based attempt number. */
  readonly attempt: number;
  /**
   * Aborts when the work must stop: the run was cancelled (reason: a `RunCancelledError`, the holder may
   * still close its turn in the log), or the lease was lost (then `leaseLost` aborts too).
   */
  readonly signal: AbortSignal;
  /**
   * Aborts when the lease is gone — a heartbeat the engine stopped seeing, another worker may hold
   * the run now — and the holder must not write to the session any more.
   */
  readonly leaseLost: AbortSignal;
  /**
   * When the engine last confirmed this lease (epoch ms on this machine's clock, read before the
   * confirming request went out, so never later than the engine's own record): the claim itself,
   * then every heartbeat or `renew` that found the lease held. It stops advancing once the lease
   * is gone (cancelled or lost). With `leaseMs`, the holder's synchronous fence: docs/dispatch.md.
   */
  readonly leaseConfirmedAt: number;
  /**
   * How long a confirmed lease holds (ms): once `leaseConfirmedAt + leaseMs` has passed, the engine
   * may have given the run to another worker, so the holder writes and starts nothing more.
   */
  readonly leaseMs: number;
  /** Refreshes the lease now; false when it is no longer held (then `signal` has aborted too). */
  renew(): Promise<boolean>;
  /** Ends the claim: the run completed, or stopped awaiting approval. */
  complete(outcome: ClaimOutcome): Promise<void>;
  /**
   * Ends the claim with a failure: with `retry`, the engine retries (bounded by `maxAttempts`,
   * then dead-letters); without, the run is dead-lettered now (no retry can fix it).
   */
  fail(error: RunError, options: { retry: boolean }): Promise<void>;
  /**
   * Gives the claim back (a worker stopping before or during the attempt): the run is claimable
   * again. An engine that cannot unclaim counts it as a failed attempt. Also how a holder settles
   * a claim whose run was cancelled (nothing is given back then; the slot is freed).
   */
  release(): Promise<void>;
}

/** Filters of `list`. */
export interface RunFilter {
  readonly states?: readonly RunState[];
  readonly sessionId?: string;
  readonly pod?: string;
  /** Newest first; default 100. */
  readonly limit?: number;
}

/** What `submit` did: `created` is false when a run with that id already existed (idempotency). */
export interface SubmitOutcome {
  readonly run: RunInfo;
  readonly created: boolean;
}

/**
 * A job-queue engine seen by podkit. Implementations pass `describeDispatcherConformance` of
 * `@podkit/dispatch/conformance`. Every method is safe to call from any process on any machine.
 */
export interface Dispatcher {
  /**
   * Enqueues a run. A run id that exists already is not enqueued again (`created: false`); runs of
   * one session are claimed one at a time, in submission order (a run waiting for a retry does not
   * hold back a later one).
   */
  submit(job: RunJob, options?: { maxAttempts?: number }): Promise<SubmitOutcome>;
  /**
   * Waits for work of one of `pods` and leases it; undefined once `signal` aborts. At most one run
   * per session is leased at a time, across all workers. A run whose lease lapsed (its holder died
   * or stalled) is claimable again at once — no retry delay, which is for failed attempts — and goes
   * before runs submitted after it.
   */
  claim(options: {
    readonly pods: readonly string[];
    readonly signal: AbortSignal;
  }): Promise<Claim | undefined>;
  /**
   * Cancels a run that has not ended: a queued one never starts, a running one's claim `signal`
   * aborts (within the adapter's cancellation bound) on whichever machine holds it. Undefined for
   * an unknown run.
   */
  cancel(runId: string): Promise<RunInfo | undefined>;
  /**
   * Continues a run that stopped `awaiting_approval` (the approval was answered): it is queued
   * again under the same id and its next attempt resumes the session.
   */
  requeue(runId: string): Promise<RunInfo>;
  show(runId: string): Promise<RunInfo | undefined>;
  list(filter?: RunFilter): Promise<RunInfo[]>;
  /** Creates or updates a schedule; its firings are claimed by workers serving its pod. */
  schedule(spec: ScheduleSpec): Promise<void>;
  /** Removes the schedules of `pod` whose names are not in `keep`. */
  unscheduleOthers(pod: string, keep: readonly string[]): Promise<void>;
  /** Stops claiming and releases connections; open claims are not settled. */
  close(): Promise<void>;
}
