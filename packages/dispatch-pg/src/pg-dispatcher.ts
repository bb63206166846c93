import {
  type Claim,
  DispatchError,
  type Dispatcher,
  type RunFilter,
  type RunInfo,
  type RunJob,
  RunStateError,
  type ScheduleSpec,
  type SubmitOutcome,
  UnknownRunError,
} from "@podkit/dispatch";
import pg from "pg";
import { type Db, PgBoss, type Queue } from "pg-boss";
import { ClaimHandoff } from "./claims.js";
import { DispatchEngineError } from "./errors.js";
import { DEAD_LETTER_QUEUE, type JobData, queueOf, runJobData } from "./job-data.js";
import { selectRuns } from "./run-rows.js";

/** Options of a `PgDispatcher`; the defaults give a failover bound of about 13 s to an idle worker (docs/dispatch.md). */
export interface PgDispatcherOptions {
  /** The connection URL: the session store's database (never written in a manifest). */
  readonly url: string;
  /** The schema pg-boss keeps its tables in (default `podkit_dispatch`), beside the store's. */
  readonly schema?: string;
  /** A claimed run whose worker misses heartbeats this long is retried elsewhere (default 10, pg-boss's minimum). */
  readonly heartbeatSeconds?: number;
  /**
   * How often a worker refreshes its heartbeat — and so how soon it sees a cancellation or a lost
   * claim (default 1).
   */
  readonly refreshSeconds?: number;
  /** How often each instance looks for lost heartbeats (default 2). */
  readonly superviseSeconds?: number;
  /** How often an idle worker polls besides being woken by NOTIFY (default 1; retries are found by polling). */
  readonly pollSeconds?: number;
  /** Attempts before a run is dead-lettered, unless its submit says otherwise (default 5). */
  readonly maxAttempts?: number;
  /**
   * First wait before retrying an attempt that failed, doubled (with jitter) per attempt up to 30 s
   * (default 1). A run whose worker died or stalled is taken over without it.
   */
  readonly retryDelaySeconds?: number;
  /** Longest an attempt may run (pg-boss's expireInSeconds; default 24 h). */
  readonly maxRunSeconds?: number;
  /** How long finished runs (and so idempotency keys) are kept (default 30 days). */
  readonly retentionDays?: number;
  /** Runs a worker holds at once (pg-boss's local concurrency per pod queue; default 1). */
  readonly concurrency?: number;
  /** Connections of pg-boss's pool (default 10). */
  readonly maxConnections?: number;
  /** Receives the engine's problems (the database is down, a slow query); it retries by itself. */
  readonly onWarning?: (message: string) => void;
}

const DAY_SECONDS = 86_400;

/**
 * The retry settings of every job: none of pg-boss's delay. A run whose lease lapsed (its worker
 * died or stalled) is retried by pg-boss's supervisor, and must be claimable at once — the takeover
 * then goes before newer runs, as pg-boss fetches by creation time. The backoff of an attempt that
 * failed is set by the claim that fails it (`ClaimHandoff`), where the two cases can be told apart.
 */
const TAKEOVER_AT_ONCE = { retryDelay: 0, retryBackoff: false } as const;

/**
 * The `Dispatcher` on PostgreSQL through pg-boss 12, in its own schema of the session store's
 * database. pg-boss keeps the leases (a heartbeat per claimed run; its supervisor retries a run
 * whose worker stopped beating), the retries with backoff, the dead-letter queue (`podkit.dead`),
 * per-session ordering (a job group per session, at most one active across all workers), the
 * wake-ups (LISTEN/NOTIFY) and the cron of `[[schedule]]`. One queue per pod; a job carries ids and
 * the input's offset, its id is the run id.
 */
export class PgDispatcher implements Dispatcher {
  private readonly boss: PgBoss;
  private readonly pool: pg.Pool;
  private readonly schema: string;
  private readonly handoff: ClaimHandoff;
  private started: Promise<void> | undefined;
  private readonly heartbeatSeconds: number;
  private readonly queues = new Map<string, Promise<void>>();
  private readonly working = new Map<string, Promise<void>>();
  private closed = false;
  /** Claim signals already watched (a worker passes the same one to every claim). */
  private readonly watched = new WeakSet<AbortSignal>();

  constructor(private readonly options: PgDispatcherOptions) {
    this.schema = options.schema ?? "podkit_dispatch";
    this.heartbeatSeconds = options.heartbeatSeconds ?? 10;
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.schema)) {
      throw new DispatchError(`dispatch schema "${this.schema}" is not a plain lower-case PostgreSQL name`);
    }
    this.boss = new PgBoss({
      connectionString: options.url,
      schema: this.schema,
      max: options.maxConnections ?? 10,
      useListenNotify: true,
      superviseIntervalSeconds: options.superviseSeconds ?? 2,
      monitorIntervalSeconds: options.superviseSeconds ?? 2,
      cronMonitorIntervalSeconds: 1,
      cronWorkerIntervalSeconds: 1,
      openTelemetry: { enabled: false },
    });
    this.boss.on("error", (error: Error) => options.onWarning?.(`dispatcher: ${error.message}`));
    this.pool = new pg.Pool({ connectionString: options.url, max: 2 });
    this.pool.on("error", () => undefined);
    this.handoff = new ClaimHandoff(
      this.boss,
      { stateOf: (queue, id) => this.stateOf(queue, id) },
      {
        heartbeatSeconds: this.heartbeatSeconds,
        refreshSeconds: options.refreshSeconds ?? 1,
        retryDelaySeconds: options.retryDelaySeconds ?? 1,
      },
    );
  }

  /** Installs or migrates pg-boss's schema and starts its supervisor; the first call of every method does it. */
  start(): Promise<void> {
    this.started ??= this.boss.start().then(
      async () => {
        await this.ensureQueue(DEAD_LETTER_QUEUE, {});
      },
      (error: unknown) => {
        this.started = undefined;
        throw new DispatchEngineError(
          `cannot start the dispatcher on schema ${this.schema}: ${String(error)}`,
          {
            hint: "check that the database is reachable and the URL's user may create the schema",
            cause: error,
          },
        );
      },
    );
    return this.started;
  }

  async submit(job: RunJob, options: { maxAttempts?: number } = {}): Promise<SubmitOutcome> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(job.runId)) {
      throw new DispatchError(`run id "${job.runId}" is not a UUID; pg-boss job ids are`);
    }
    await this.start();
    const queue = await this.queueFor(job.pod);
    const created = await this.boss.send(queue, runJobData(job), {
      id: job.runId,
      group: { id: job.sessionId },
      retryLimit: Math.max(1, options.maxAttempts ?? this.options.maxAttempts ?? 5) - 1,
      ...TAKEOVER_AT_ONCE,
    });
    const run = await this.show(job.runId);
    if (run === undefined) throw new DispatchError(`run ${job.runId} was submitted but cannot be read back`);
    return { run, created: created !== null };
  }

  async claim(options: {
    readonly pods: readonly string[];
    readonly signal: AbortSignal;
  }): Promise<Claim | undefined> {
    if (this.closed || options.signal.aborted) return undefined;
    await this.start();
    for (const pod of options.pods) await this.workOn(pod);
    if (!this.watched.has(options.signal)) {
      this.watched.add(options.signal);
      // A worker that stops claiming (draining) must stop pg-boss fetching for it at once, or the
      // next job would be fetched, leased and then handed back at close, costing it an attempt.
      options.signal.addEventListener("abort", () => {
        if (this.handoff.waiting === 0) this.pauseWork();
      });
    }
    return this.handoff.take(options.signal);
  }

  async cancel(runId: string): Promise<RunInfo | undefined> {
    const run = await this.show(runId);
    if (run === undefined) return undefined;
    if (run.state === "awaiting_approval") await this.cancelAwaiting(run);
    else await this.boss.cancel(queueOf(run.pod), runId);
    return this.show(runId);
  }

  /**
   * A run awaiting approval is a completed job to pg-boss, which cancels only jobs that have not
   * ended: its job is replaced by a cancelled one under the same id, in one transaction (the
   * requeue's way), so an answer arriving later finds the run cancelled and requeues nothing.
   */
  private async cancelAwaiting(run: RunInfo): Promise<void> {
    const queue = queueOf(run.pod);
    const begin = this.boss.getDb().beginTransaction;
    if (begin === undefined) throw new DispatchEngineError("pg-boss's database adapter has no transactions");
    const transaction = await begin.call(this.boss.getDb());
    try {
      // Still awaiting (a concurrent answer may have requeued it): only then is it replaced. Read
      // under the run's lock, inside the transaction, so a requeue cannot slip in between.
      const [current] = await lockedRun(transaction.db, this.schema, run.runId);
      if (current?.state !== "awaiting_approval") {
        await transaction.rollback();
        if (current !== undefined) await this.boss.cancel(queue, run.runId);
        return;
      }
      await this.boss.deleteJob(queue, run.runId, { db: transaction.db });
      await this.boss.send(queue, runJobData(run), {
        id: run.runId,
        group: { id: run.sessionId },
        retryLimit: run.maxAttempts - 1,
        startAfter: new Date(Date.now() + 3_600_000),
        db: transaction.db,
      });
      await this.boss.cancel(queue, run.runId, { db: transaction.db });
      await transaction.commit();
    } catch (error) {
      await transaction.rollback();
      throw error;
    }
  }

  /**
   * Queues a run that stopped awaiting approval again, under the same id: its completed job is
   * replaced by a new one in one transaction, so a crash leaves either the waiting run or the
   * queued one, never neither.
   */
  async requeue(runId: string): Promise<RunInfo> {
    await this.start();
    const begin = this.boss.getDb().beginTransaction;
    if (begin === undefined) throw new DispatchEngineError("pg-boss's database adapter has no transactions");
    const transaction = await begin.call(this.boss.getDb());
    try {
      // The state is read under the run's lock, inside the transaction: two answers, or an answer
      // and a cancel, arriving together replace the job once; the second sees what the first did.
      const [run] = await lockedRun(transaction.db, this.schema, runId);
      if (run === undefined) throw new UnknownRunError(runId);
      if (run.state !== "awaiting_approval") {
        throw new RunStateError({
          runId,
          state: run.state,
          wanted: "only a run awaiting approval is requeued",
        });
      }
      const queue = queueOf(run.pod);
      await this.boss.deleteJob(queue, runId, { db: transaction.db });
      await this.boss.send(queue, runJobData(run), {
        id: runId,
        group: { id: run.sessionId },
        retryLimit: run.maxAttempts - 1,
        ...TAKEOVER_AT_ONCE,
        db: transaction.db,
      });
      await transaction.commit();
    } catch (error) {
      await transaction.rollback();
      throw error;
    }
    return (await this.show(runId)) as RunInfo;
  }

  async show(runId: string): Promise<RunInfo | undefined> {
    await this.start();
    const [run] = await selectRuns(this.pool, this.schema, { runId, limit: 1 });
    return run;
  }

  async list(filter: RunFilter = {}): Promise<RunInfo[]> {
    await this.start();
    return selectRuns(this.pool, this.schema, filter);
  }

  async schedule(spec: ScheduleSpec): Promise<void> {
    await this.start();
    const queue = await this.queueFor(spec.pod);
    const data: JobData = { kind: "firing", pod: spec.pod, schedule: spec.name };
    try {
      await this.boss.schedule(queue, spec.cron, data, {
        key: spec.name,
        ...(spec.tz === undefined ? {} : { tz: spec.tz }),
      });
    } catch (error) {
      throw new DispatchEngineError(
        `schedule "${spec.name}" of pod "${spec.pod}" (cron "${spec.cron}"${spec.tz === undefined ? "" : `, tz "${spec.tz}"`}) was refused: ${error instanceof Error ? error.message : String(error)}`,
        { hint: "fix the [[schedule]] entry in the pod's manifest", cause: error, errorKind: "usage" },
      );
    }
  }

  async unscheduleOthers(pod: string, keep: readonly string[]): Promise<void> {
    await this.start();
    const queue = await this.queueFor(pod);
    for (const schedule of await this.boss.getSchedules(queue)) {
      if (!keep.includes(schedule.key)) await this.boss.unschedule(queue, schedule.key);
    }
  }

  /**
   * Stops claiming, hands back delivered runs nobody claimed, and stops pg-boss (open claims are
   * not settled: their runs are retried once their heartbeats lapse).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.started !== undefined) {
      await Promise.allSettled(
        [...this.working.keys()].map((queue) => this.boss.offWork(queue, { wait: false })),
      );
      this.handoff.releaseUnclaimed();
      this.handoff.stopHeartbeats();
      await this.boss.stop({ graceful: false, timeout: 1_000 }).catch(() => undefined);
    }
    await this.pool.end();
  }

  private async queueFor(pod: string): Promise<string> {
    const queue = queueOf(pod);
    const days = this.options.retentionDays ?? 30;
    await this.ensureQueue(queue, {
      heartbeatSeconds: this.heartbeatSeconds,
      expireInSeconds: this.options.maxRunSeconds ?? DAY_SECONDS,
      retryLimit: Math.max(1, this.options.maxAttempts ?? 5) - 1,
      ...TAKEOVER_AT_ONCE,
      deadLetter: DEAD_LETTER_QUEUE,
      notify: true,
      // A queued run is never dropped for waiting; finished ones are kept `retentionDays`.
      retentionSeconds: 3650 * DAY_SECONDS,
      deleteAfterSeconds: days * DAY_SECONDS,
    });
    return queue;
  }

  private ensureQueue(name: string, options: Omit<Queue, "name">): Promise<void> {
    let made = this.queues.get(name);
    if (made === undefined) {
      made = (async () => {
        if ((await this.boss.getQueue(name)) === null) await this.boss.createQueue(name, options);
      })();
      made.catch(() => this.queues.delete(name));
      this.queues.set(name, made);
    }
    return made;
  }

  private workOn(pod: string): Promise<void> {
    const queue = queueOf(pod);
    let working = this.working.get(queue);
    if (working === undefined) {
      working = (async () => {
        await this.queueFor(pod);
        const poll = Math.max(0.5, this.options.pollSeconds ?? 1);
        await this.boss.work(
          queue,
          {
            batchSize: 1,
            localConcurrency: Math.max(1, this.options.concurrency ?? 1),
            groupConcurrency: 1,
            perJobResults: true,
            // Each claim refreshes its own lease every refreshSeconds (ClaimHandoff); pg-boss's
            // heartbeat is the backstop that aborts a job's signal when its claim is gone.
            heartbeatRefreshSeconds: Math.max(this.options.refreshSeconds ?? 1, this.heartbeatSeconds / 2),
            pollingIntervalSeconds: poll,
            notifyPollingIntervalSeconds: poll,
          },
          this.handoff.handler,
        );
      })();
      working.catch(() => this.working.delete(queue));
      this.working.set(queue, working);
    }
    return working;
  }

  /** Stops fetching for every queue; the next `claim` starts again. Runs in progress are untouched. */
  private pauseWork(): void {
    for (const queue of this.working.keys()) this.boss.offWork(queue, { wait: false }).catch(() => undefined);
    this.working.clear();
  }

  private async stateOf(queue: string, id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ state: string }>(
      `SELECT state::text FROM "${this.schema}".job WHERE name = $1 AND id::text = $2`,
      [queue, id],
    );
    return rows[0]?.state;
  }
}

/**
 * A run's row read inside a transaction, after taking the run's transaction-scoped advisory lock:
 * every replacement of a run's job (requeue, cancel while awaiting) takes it first, so they run one
 * after another and each reads the state the one before left.
 */
async function lockedRun(db: Db, schema: string, runId: string): Promise<RunInfo[]> {
  await db.executeSql("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`podkit.run:${runId}`]);
  return selectRuns({ query: (sql, values) => db.executeSql(sql, values) }, schema, { runId, limit: 1 });
}
