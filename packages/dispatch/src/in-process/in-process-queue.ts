import { randomUUID } from "node:crypto";
import type {
  Claim,
  ClaimOutcome,
  Dispatcher,
  RunError,
  RunFilter,
  RunInfo,
  RunJob,
  RunState,
  ScheduleFiring,
  ScheduleSpec,
  SubmitOutcome,
} from "../dispatcher.js";
import { DispatchError, RunCancelledError, RunStateError, UnknownRunError } from "../errors.js";

/** Options of an `InProcessQueue`. */
export interface InProcessQueueOptions {
  /** A claim not renewed for this long is lost and its run retried (default 10 000 ms). */
  readonly leaseMs?: number;
  /** Attempts before a run is dead-lettered, unless its submit says otherwise (default 5). */
  readonly maxAttempts?: number;
  /** Wait before a failed run may be claimed again (default 0); a run whose lease lapsed waits none. */
  readonly retryDelayMs?: number;
}

interface Entry {
  job: RunJob;
  state: RunState;
  attempts: number;
  maxAttempts: number;
  submittedAt: Date;
  startedAt?: Date;
  endedAt?: Date;
  result?: string;
  output?: unknown;
  error?: RunError;
  readyAt: number;
  holder?: Holder;
}

interface Holder {
  readonly connection: number;
  readonly signal: AbortController;
  readonly leaseLost: AbortController;
  /** When the lease was last confirmed (claimed or renewed). */
  confirmedAt: number;
  expiresAt: number;
}

interface Firing extends ScheduleFiring {
  holder?: Holder;
}

/**
 * The dispatch engine of one process, for tests and single-machine use: runs, leases, retries and
 * dead-lettering in memory, with the same semantics as an engine on a database. Several
 * `connect()`ed dispatchers share it the way workers on several machines share a database, and
 * `crash()` on one of them stops its lease renewals the way a killed process would. Its cron is
 * manual: `fire(pod, schedule)` creates a firing of a registered schedule.
 */
export class InProcessQueue {
  private readonly runs = new Map<string, Entry>();
  private readonly firings: Firing[] = [];
  private readonly schedules = new Map<string, ScheduleSpec>();
  private readonly waiters = new Set<() => void>();
  private connections = 0;
  readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;

  constructor(options: InProcessQueueOptions = {}) {
    this.leaseMs = options.leaseMs ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 0;
  }

  /** A dispatcher on this queue, as one process (one machine) would hold it. */
  connect(): InProcessDispatcher {
    return new InProcessDispatcher(this, ++this.connections);
  }

  /** The registered schedules. */
  get scheduled(): ScheduleSpec[] {
    return [...this.schedules.values()];
  }

  /** One firing of a registered schedule, claimable by workers of its pod. */
  fire(pod: string, schedule: string): string {
    if (!this.schedules.has(`${pod}/${schedule}`)) {
      throw new DispatchError(`no schedule "${schedule}" of pod "${pod}" is registered`);
    }
    const firingId = randomUUID();
    this.firings.push({ pod, schedule, firingId });
    this.wake();
    return firingId;
  }

  submit(job: RunJob, maxAttempts: number | undefined): SubmitOutcome {
    const existing = this.runs.get(job.runId);
    if (existing !== undefined) return { run: this.info(existing), created: false };
    const entry: Entry = {
      job: { ...job, input: { ...job.input } },
      state: "queued",
      attempts: 0,
      maxAttempts: maxAttempts ?? this.maxAttempts,
      submittedAt: new Date(),
      readyAt: 0,
    };
    this.runs.set(job.runId, entry);
    this.wake();
    return { run: this.info(entry), created: true };
  }

  async claim(connection: number, pods: readonly string[], signal: AbortSignal): Promise<Claim | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      this.expireLeases();
      const claim = this.takeFiring(connection, pods) ?? this.takeRun(connection, pods);
      if (claim !== undefined) return claim;
      await this.nextChange(signal);
    }
  }

  private takeRun(connection: number, pods: readonly string[]): Claim | undefined {
    const now = Date.now();
    const busy = new Set(
      [...this.runs.values()].filter((e) => e.state === "running").map((e) => e.job.sessionId),
    );
    for (const entry of this.runs.values()) {
      if (entry.state !== "queued" && entry.state !== "retrying") continue;
      if (!pods.includes(entry.job.pod) || entry.readyAt > now || busy.has(entry.job.sessionId)) continue;
      const holder = this.hold(connection);
      Object.assign(entry, { state: "running", attempts: entry.attempts + 1, startedAt: new Date(), holder });
      return this.claimOf(entry, holder);
    }
    return undefined;
  }

  private takeFiring(connection: number, pods: readonly string[]): Claim | undefined {
    const firing = this.firings.find((f) => f.holder === undefined && pods.includes(f.pod));
    if (firing === undefined) return undefined;
    const holder = this.hold(connection);
    firing.holder = holder;
    const settle = async () => {
      if (firing.holder !== holder) return;
      this.firings.splice(this.firings.indexOf(firing), 1);
    };
    return {
      work: { kind: "firing", pod: firing.pod, schedule: firing.schedule, firingId: firing.firingId },
      attempt: 1,
      signal: holder.signal.signal,
      leaseLost: holder.leaseLost.signal,
      get leaseConfirmedAt() {
        return holder.confirmedAt;
      },
      leaseMs: this.leaseMs,
      renew: async () => this.renew(holder),
      complete: settle,
      fail: settle,
      release: async () => {
        if (firing.holder === holder) delete firing.holder;
        this.wake();
      },
    };
  }

  private hold(connection: number): Holder {
    const now = Date.now();
    return {
      connection,
      signal: new AbortController(),
      leaseLost: new AbortController(),
      confirmedAt: now,
      expiresAt: now + this.leaseMs,
    };
  }

  private claimOf(entry: Entry, holder: Holder): Claim {
    const held = () => entry.holder === holder && entry.state === "running";
    const end = (patch: Partial<Entry>) => {
      Object.assign(entry, { endedAt: new Date(), ...patch });
      delete entry.holder;
      this.wake();
    };
    return {
      work: { kind: "run", run: entry.job },
      attempt: entry.attempts,
      signal: holder.signal.signal,
      leaseLost: holder.leaseLost.signal,
      get leaseConfirmedAt() {
        return holder.confirmedAt;
      },
      leaseMs: this.leaseMs,
      renew: async () => held() && this.renew(holder),
      complete: async (outcome: ClaimOutcome) => {
        if (!held()) return;
        end(
          outcome.state === "completed"
            ? {
                state: "completed",
                result: outcome.result,
                ...(outcome.output === undefined ? {} : { output: outcome.output }),
              }
            : { state: outcome.state },
        );
      },
      fail: async (error, { retry }) => {
        if (held()) this.failAttempt(entry, error, retry);
      },
      release: async () => {
        if (!held()) return;
        Object.assign(entry, {
          state: entry.attempts > 1 ? "retrying" : "queued",
          attempts: entry.attempts - 1,
        });
        delete entry.holder;
        this.wake();
      },
    };
  }

  private renew(holder: Holder): boolean {
    // A cancelled run's holder is no longer confirmed either: its lease runs out where it stands.
    if (holder.leaseLost.signal.aborted || holder.signal.signal.aborted) return false;
    const now = Date.now();
    holder.confirmedAt = now;
    holder.expiresAt = now + this.leaseMs;
    return true;
  }

  /** `delayMs`: the retry delay of a failed attempt; a lapsed lease is taken over at once. */
  private failAttempt(entry: Entry, error: RunError, retry: boolean, delayMs = this.retryDelayMs): void {
    const again = retry && entry.attempts < entry.maxAttempts;
    Object.assign(entry, {
      state: again ? "retrying" : "dead",
      error,
      readyAt: Date.now() + delayMs,
      ...(again ? {} : { endedAt: new Date() }),
    });
    delete entry.holder;
    this.wake();
  }

  /** Leases not renewed in time are lost: the holder's signals abort, the run is retried. */
  private expireLeases(): void {
    const now = Date.now();
    for (const entry of this.runs.values()) {
      const holder = entry.holder;
      if (holder === undefined || holder.expiresAt > now) continue;
      const lost = new DispatchError(`the lease on run ${entry.job.runId} expired`);
      holder.leaseLost.abort(lost);
      holder.signal.abort(lost);
      this.failAttempt(
        entry,
        { type: "LeaseExpired", message: "the worker stopped renewing its lease" },
        true,
        0,
      );
    }
    for (const firing of this.firings) {
      if (firing.holder !== undefined && firing.holder.expiresAt <= now) delete firing.holder;
    }
  }

  /**
   * Renews the leases `connection` holds (its heartbeat) and expires lapsed ones; a crashed
   * connection stops calling this, a stalled one calls it with `renew` false.
   */
  heartbeat(connection: number, renew = true): void {
    for (const entry of this.runs.values()) {
      if (renew && entry.holder?.connection === connection) this.renew(entry.holder);
    }
    for (const firing of this.firings)
      if (renew && firing.holder?.connection === connection) this.renew(firing.holder);
    this.expireLeases();
  }

  cancel(runId: string): RunInfo | undefined {
    const entry = this.runs.get(runId);
    if (entry === undefined) return undefined;
    if (entry.state === "completed" || entry.state === "cancelled" || entry.state === "dead")
      return this.info(entry);
    entry.holder?.signal.abort(new RunCancelledError(runId));
    Object.assign(entry, { state: "cancelled", endedAt: new Date() });
    delete entry.holder;
    this.wake();
    return this.info(entry);
  }

  requeue(runId: string): RunInfo {
    const entry = this.runs.get(runId);
    if (entry === undefined) throw new UnknownRunError(runId);
    if (entry.state !== "awaiting_approval") {
      throw new RunStateError({
        runId,
        state: entry.state,
        wanted: "only a run awaiting approval is requeued",
      });
    }
    Object.assign(entry, { state: "queued", readyAt: 0 });
    delete entry.endedAt;
    this.wake();
    return this.info(entry);
  }

  show(runId: string): RunInfo | undefined {
    const entry = this.runs.get(runId);
    return entry === undefined ? undefined : this.info(entry);
  }

  list(filter: RunFilter): RunInfo[] {
    return [...this.runs.values()]
      .filter((e) => filter.states === undefined || filter.states.includes(e.state))
      .filter((e) => filter.sessionId === undefined || e.job.sessionId === filter.sessionId)
      .filter((e) => filter.pod === undefined || e.job.pod === filter.pod)
      .reverse()
      .slice(0, filter.limit ?? 100)
      .map((e) => this.info(e));
  }

  schedule(spec: ScheduleSpec): void {
    this.schedules.set(`${spec.pod}/${spec.name}`, { ...spec });
  }

  unscheduleOthers(pod: string, keep: readonly string[]): void {
    for (const [key, spec] of this.schedules) {
      if (spec.pod === pod && !keep.includes(spec.name)) this.schedules.delete(key);
    }
  }

  private info(entry: Entry): RunInfo {
    const { job } = entry;
    return {
      ...job,
      state: entry.state,
      attempts: entry.attempts,
      maxAttempts: entry.maxAttempts,
      submittedAt: entry.submittedAt,
      ...(entry.startedAt === undefined ? {} : { startedAt: entry.startedAt }),
      ...(entry.endedAt === undefined ? {} : { endedAt: entry.endedAt }),
      ...(entry.result === undefined ? {} : { result: entry.result }),
      ...(entry.output === undefined ? {} : { output: entry.output }),
      ...(entry.error === undefined ? {} : { error: entry.error }),
    };
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves on the next change, at the next lease or retry deadline, or when `signal` aborts. */
  private nextChange(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.min(this.leaseMs, 100));
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        waiters.delete(done);
        resolve();
      }
      const waiters = this.waiters;
      waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

/** One connection to an `InProcessQueue`: what one worker process holds. */
export class InProcessDispatcher implements Dispatcher {
  private readonly beat: NodeJS.Timeout;
  private crashed = false;
  private stalledUntil = 0;

  constructor(
    private readonly queue: InProcessQueue,
    private readonly connection: number,
  ) {
    this.beat = setInterval(
      () => queue.heartbeat(connection, Date.now() >= this.stalledUntil),
      Math.max(10, queue.leaseMs / 3),
    );
    this.beat.unref();
  }

  /** Stops renewing this connection's leases, as a killed process would: they expire after `leaseMs`. */
  crash(): void {
    this.crashed = true;
    clearInterval(this.beat);
  }

  /**
   * Renews none of this connection's leases for `ms`, then goes on, as a paused process would (a
   * GC pause, a swapped-out VM, SIGSTOP): leases that lapse meanwhile are lost. Its claims notice
   * when its heartbeat runs again, or at once through `leaseConfirmedAt`.
   */
  stall(ms: number): void {
    this.stalledUntil = Date.now() + ms;
  }

  async submit(job: RunJob, options: { maxAttempts?: number } = {}): Promise<SubmitOutcome> {
    return this.queue.submit(job, options.maxAttempts);
  }

  async claim(options: { pods: readonly string[]; signal: AbortSignal }): Promise<Claim | undefined> {
    if (this.crashed) return undefined;
    return this.queue.claim(this.connection, options.pods, options.signal);
  }

  async cancel(runId: string): Promise<RunInfo | undefined> {
    return this.queue.cancel(runId);
  }

  async requeue(runId: string): Promise<RunInfo> {
    return this.queue.requeue(runId);
  }

  async show(runId: string): Promise<RunInfo | undefined> {
    return this.queue.show(runId);
  }

  async list(filter: RunFilter = {}): Promise<RunInfo[]> {
    return this.queue.list(filter);
  }

  async schedule(spec: ScheduleSpec): Promise<void> {
    this.queue.schedule(spec);
  }

  async unscheduleOthers(pod: string, keep: readonly string[]): Promise<void> {
    this.queue.unscheduleOthers(pod, keep);
  }

  async close(): Promise<void> {
    clearInterval(this.beat);
  }
}
