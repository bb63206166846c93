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

/**
 * The bridge between pg-boss's `work()` — which fetches a job when a local slot is free, keeps its
 * heartbeat, aborts its signal when the claim is gone, and settles it with the handler's result —
 * and the pull-style `Dispatcher.claim()`. Each delivered job waits until a claimer takes it; the
 * claim's settle methods resolve the handler, and pg-boss settles the job (retry, dead letter or
 * completion) itself.
 */
export class ClaimHandoff {
  private readonly delivered: Delivered[] = [];
  private readonly claimers: ((delivery: Delivered) => void)[] = [];

  constructor(
    private readonly boss: PgBoss,
    private readonly schema: { stateOf(queue: string, id: string): Promise<string | undefined> },
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

  /** Claimers waiting for a job now. */
  get waiting(): number {
    return this.claimers.length;
  }

  /** The next delivered job as a claim; undefined when `signal` aborts first. */
  async take(signal: AbortSignal): Promise<Claim | undefined> {
    for (;;) {
      const delivery = this.delivered.shift() ?? (await this.next(signal));
      if (delivery === undefined) return undefined;
      const claim = this.claimOf(delivery);
      if (claim !== undefined) return claim;
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
    const end = (result: JobResult) => {
      if (resolved) return;
      resolved = true;
      settle(result);
    };
    // pg-boss aborts the job's signal when its heartbeat finds the claim gone (or the instance
    // stops); the job's state tells a cancellation (the holder may still close its turn) from a
    // lost lease (another worker may hold the run: stop writing).
    const lost = () => {
      const reason = new DispatchError(`the lease on job ${job.id} was lost`);
      leaseLost.abort(reason);
      signal.abort(reason);
    };
    job.signal.addEventListener(
      "abort",
      () => {
        // pg-boss also aborts it once the handler's result is settled: nothing is lost then.
        if (settled) return;
        this.schema.stateOf(job.name, job.id).then(
          (state) => {
            if (state === "cancelled")
              signal.abort(new RunCancelledError(data.kind === "run" ? data.run_id : job.id));
            else lost();
          },
          () => lost(),
        );
      },
      { once: true },
    );
    return {
      work: workOf(data, job.id),
      attempt: job.retryCount + 1,
      signal: signal.signal,
      leaseLost: leaseLost.signal,
      renew: async () => {
        if (leaseLost.signal.aborted || signal.signal.aborted) return false;
        // The declared CommandResponse is empty; the object carries `affected` (pg-boss 12).
        const touched = (await this.boss.touch(job.name, [attempt])) as { affected?: number };
        return (touched.affected ?? 0) > 0;
      },
      complete: async (outcome: ClaimOutcome) => {
        settled = true;
        const output =
          outcome.state === "completed"
            ? { state: "completed", result: outcome.result }
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
          if (retry) await this.boss.fail(job.name, [attempt], { error });
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

  /** Waits (bounded) until pg-boss has settled the job the handler resolved. */
  private async settledAway(job: Job<unknown>): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if ((await this.schema.stateOf(job.name, job.id)) !== "active") return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
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
