import {
  type Claim,
  type ClaimOutcome,
  DispatchError,
  RunCancelledError,
  type RunError,
} from "@podkit/dispatch";
import type { Job, JobResult, PgBoss } from "pg-boss";
import { type JobData, JobDataSchema } from "./job-data.js";

/** A job pg-boss handed to `work()`, waiting for `claim()` to take it. */
interface Delivered {
  job: Job<unknown>;
  settle(result: JobResult): void;
}

/** The lease settings the claims of a dispatcher follow. */
export interface LeaseSettings {
  /** pg-boss's `heartbeatSeconds`: a claim not refreshed this long is lost. */
  readonly heartbeatSeconds: number;
  /** How often each claim's lease is refreshed (and so how soon a cancellation is seen). */
  readonly refreshSeconds: number;
  /** First wait before retrying a failed attempt, doubled with jitter per attempt up to 30 s. */
  readonly retryDelaySeconds: number;
}

const MAX_RETRY_DELAY_SECONDS = 30;

/**
 * The bridge between pg-boss's `work()` — which fetches a job when a local slot is free, keeps its
 * heartbeat, aborts its signal when the claim is gone, and settles it with the handler's result —
 * and the pull-style `Dispatcher.claim()`. Each delivered job waits until a claimer takes it; the
 * claim's settle methods resolve the handler (every settle does, whatever happened to the job: that
 * frees pg-boss's local slot), and pg-boss settles the job (retry, dead letter or completion)
 * itself, fenced to the attempt. Each claim also refreshes its own lease, so it knows when the
 * lease was last confirmed (`leaseConfirmedAt`): pg-boss's heartbeat does not say.
 */
export class ClaimHandoff {
  private readonly delivered: Delivered[] = [];
  private readonly claimers: ((delivery: Delivered) => void)[] = [];
  /** The heartbeats of the claims not settled yet. */
  private readonly keepers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly boss: PgBoss,
    private readonly schema: { stateOf(queue: string, id: string): Promise<string | undefined> },
    private readonly lease: LeaseSettings,
  ) {}

  /** The `work()` handler: hands the job to a claimer and resolves with how the claim settled it. */
  readonly handler = async (jobs: Job<unknown>[]): Promise<JobResult[]> =>
    Promise.all(
      jobs.map(
        (job) =>
          new Promise<JobResult>((settle) => {
            const delivery = { job, settle };
            const claimer = this.claimers.shift();
            if (claimer !== undefined) claimer(delivery);
            else this.delivered.push(delivery);
          }),
      ),
    );

  /** Stops the claims' heartbeats (the dispatcher closes; its open claims are not settled). */
  stopHeartbeats(): void {
    for (const keeper of this.keepers) clearInterval(keeper);
    this.keepers.clear();
  }

  /** Claimers waiting for a job now. */
  get waiting(): number {
    return this.claimers.length;
  }

  /**
   * The next delivered job as a claim, its lease confirmed just now (a delivered job may have
   * waited for its claimer); undefined when `signal` aborts first.
   */
  async take(signal: AbortSignal): Promise<Claim | undefined> {
    for (;;) {
      const delivery = this.delivered.shift() ?? (await this.next(signal));
      if (delivery === undefined) return undefined;
      const claim = this.claimOf(delivery);
      if (claim === undefined) continue;
      if (await claim.renew().catch(() => false)) return claim;
      // Lost or cancelled while it waited (or unconfirmable now): settled, it frees its slot.
      await claim.release().catch(() => undefined);
    }
  }

  /**
   * Hands back every delivered job nobody claimed (a worker draining): failed with retry, since
   * pg-boss has no public way to unclaim; the next worker resumes the run from its log.
   */
  releaseUnclaimed(): void {
    for (const { job, settle } of this.delivered.splice(0)) {
      settle({ id: job.id, status: "failed", output: { error: handedBack() } });
    }
  }

  private next(signal: AbortSignal): Promise<Delivered | undefined> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(undefined);
      const claimer = (delivery: Delivered) => {
        signal.removeEventListener("abort", onAbort);
        resolve(delivery);
      };
      const onAbort = () => {
        this.claimers.splice(this.claimers.indexOf(claimer), 1);
        resolve(undefined);
      };
      this.claimers.push(claimer);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private claimOf({ job, settle }: Delivered): Claim | undefined {
    const parsed = JobDataSchema.safeParse(job.data);
    if (!parsed.success) {
      // A job podkit did not write (or a corrupted one): no retry can make it usable.
      const message = `job ${job.id} of queue ${job.name} is not a podkit job: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`;
      settle({ id: job.id, status: "deadletter", output: { error: { type: "InvalidJobError", message } } });
      return undefined;
    }
    const data = parsed.data;
    const attempt = { id: job.id, retryCount: job.retryCount };
    const signal = new AbortController();
    const leaseLost = new AbortController();
    // Set when a settle method starts: the heartbeat finding the claim gone after that is no loss.
    let settled = false;
    let resolved = false;
    // pg-boss set the heartbeat when it fetched the job, before the handler got it: `take` confirms
    // the lease again before the claim is handed out.
    let confirmedAt = Number.NEGATIVE_INFINITY;
    const end = (result: JobResult) => {
      if (resolved) return;
      resolved = true;
      clearInterval(keeper);
      this.keepers.delete(keeper);
      settle(result);
    };
    // The job's state tells a cancellation (the holder may still close its turn) from a lost lease
    // (another worker may hold the run: stop writing).
    const lost = () => {
      const reason = new DispatchError(`the lease on job ${job.id} was lost`);
      leaseLost.abort(reason);
      signal.abort(reason);
    };
    let checking = false;
    const gone = () => {
      // pg-boss also aborts its signal once the handler's result is settled: nothing is lost then.
      if (settled || checking || signal.signal.aborted) return;
      checking = true;
      this.schema.stateOf(job.name, job.id).then(
        (state) => {
          if (state === "cancelled")
            signal.abort(new RunCancelledError(data.kind === "run" ? data.run_id : job.id));
          else lost();
        },
        () => lost(),
      );
    };
    // pg-boss aborts the job's signal when its own heartbeat finds the claim gone (or it stops).
    job.signal.addEventListener("abort", gone, { once: true });
    const renew = async (): Promise<boolean> => {
      if (leaseLost.signal.aborted || signal.signal.aborted) return false;
      // Read before the request goes out: the database's heartbeat is never older than this.
      const sentAt = Date.now();
      // The declared CommandResponse is empty; the object carries `affected` (pg-boss 12).
      const touched = (await this.boss.touch(job.name, [attempt])) as { affected?: number };
      if ((touched.affected ?? 0) > 0) {
        if (!signal.signal.aborted) confirmedAt = Math.max(confirmedAt, sentAt);
        return true;
      }
      gone();
      return false;
    };
    // The claim's own heartbeat: it confirms the lease (pg-boss's says nothing to the holder) and
    // finds a cancelled or lost claim; a refresh that fails (the database is away) confirms nothing.
    const keeper = setInterval(() => {
      if (!resolved) renew().catch(() => undefined);
    }, this.lease.refreshSeconds * 1000);
    keeper.unref();
    this.keepers.add(keeper);
    return {
      work: workOf(data, job.id),
      attempt: job.retryCount + 1,
      signal: signal.signal,
      leaseLost: leaseLost.signal,
      get leaseConfirmedAt() {
        return confirmedAt;
      },
      leaseMs: this.lease.heartbeatSeconds * 1000,
      renew,
      complete: async (outcome: ClaimOutcome) => {
        settled = true;
        // A typed answer (docs/output.md) is the run's result too: `show` reads it back from here.
        const output =
          outcome.state === "completed"
            ? {
                state: "completed",
                result: outcome.result,
                ...(outcome.output === undefined ? {} : { output: outcome.output }),
              }
            : { state: outcome.state };
        try {
          // Completed here, fenced to this attempt, so the run reads as settled when this resolves;
          // pg-boss's own completion of the handler's result then finds nothing left to do.
          await this.boss.complete(job.name, [attempt], output);
        } finally {
          end({ id: job.id, status: "completed", output });
        }
      },
      fail: async (error: RunError, { retry }) => {
        settled = true;
        try {
          if (retry) await this.failWithBackoff(job, attempt, error);
        } finally {
          end({ id: job.id, status: retry ? "failed" : "deadletter", output: { error } });
        }
        if (!retry) await this.settledAway(job);
      },
      release: async () => {
        settled = true;
        try {
          await this.boss.fail(job.name, [attempt], { error: handedBack() });
        } finally {
          end({ id: job.id, status: "failed", output: { error: handedBack() } });
        }
      },
    };
  }

  /**
   * Fails the attempt for a retry after the backoff of a failed attempt — in one transaction, so no
   * worker can fetch the retry before its delay is set. The job's own retry delay is 0 (a run whose
   * lease lapsed is taken over at once), so the backoff of an attempt that failed is set here.
   * Fenced to the attempt: when another attempt holds the run, nothing changes.
   */
  private async failWithBackoff(
    job: Job<unknown>,
    attempt: { id: string; retryCount: number },
    error: RunError,
  ): Promise<void> {
    const db = this.boss.getDb();
    if (db.beginTransaction === undefined) {
      await this.boss.fail(job.name, [attempt], { error });
      return;
    }
    const transaction = await db.beginTransaction.call(db);
    try {
      const failed = (await this.boss.fail(job.name, [attempt], { error }, { db: transaction.db })) as {
        affected?: number;
      };
      if ((failed.affected ?? 0) > 0) {
        await this.boss.update(job.name, undefined, {
          id: job.id,
          startAfter: retryDelaySeconds(this.lease.retryDelaySeconds, attempt.retryCount),
          db: transaction.db,
        });
      }
      await transaction.commit();
    } catch (cause) {
      await transaction.rollback();
      throw cause;
    }
  }

  /** Waits (bounded) until pg-boss has settled the job the handler resolved. */
  private async settledAway(job: Job<unknown>): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if ((await this.schema.stateOf(job.name, job.id)) !== "active") return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * The wait before retry number `retryCount + 1` of a failed attempt: pg-boss's own backoff (the
 * first delay doubled per attempt, times 1–2 for jitter, at most 30 s), in seconds.
 */
export function retryDelaySeconds(first: number, retryCount: number): number {
  if (first <= 0) return 0;
  const delay = Math.max(first, 1) * 2 ** Math.min(16, retryCount) * (1 + Math.random());
  return Math.round(Math.min(MAX_RETRY_DELAY_SECONDS, delay) * 1000) / 1000;
}

function handedBack(): RunError {
  return {
    type: "HandedBack",
    message: "the worker stopped before finishing; another worker continues the run",
  };
}

function workOf(data: JobData, jobId: string): Claim["work"] {
  if (data.kind === "firing")
    return { kind: "firing", pod: data.pod, schedule: data.schedule, firingId: jobId };
  return {
    kind: "run",
    run: {
      runId: data.run_id,
      pod: data.pod,
      sessionId: data.session_id,
      input: { segmentId: data.input.segment_id, index: data.input.index },
    },
  };
}
