import type { Item, WorkerEvent } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import type { JobProgressEvent } from "./events.js";

/** What an after-turn job is given: the session's head segment, its extension state and writer. */
export interface AfterTurnJobContext {
  readonly sessionId: string;
  readonly segmentId: string;
  /** Fires when the pod closes (or the final pass at close runs out of time); a job must stop promptly. */
  readonly signal: AbortSignal;
  /** True in the final pass `pod.close()` runs for `runOnClose` jobs (take in the session's tail). */
  readonly final: boolean;
  /** The folded state of an `extension` domain (latest payload), undefined when none. */
  extension(domain: string): unknown;
  /**
   * The committed entries of the head segment, in order — or of another segment of the session
   * (one compaction left behind: memory extracts its tail), by id.
   */
  readEntries(segmentId?: string): AsyncIterable<Entry<Item>>;
  /**
   * The store's incremental read: the committed entries of a segment of the session at index
   * ≥ `from`, in batches. A job that keeps its own position (memory's extract pointer) reads only
   * what is new, so its cost per pass does not grow with the session.
   */
  readFrom(
    ref: { sessionId: string; segmentId: string },
    from: number,
  ): AsyncIterable<readonly Entry<Item>[]>;
  /**
   * Appends an `extension` entry through the pod's own session writer (never a second writer on
   * the segment). Waits until no turn is running, so it never lands inside a turn.
   */
  appendExtension(domain: string, payload: unknown): Promise<void>;
  /** Reports the job's progress as a `job_progress` event to `pod.subscribe` listeners and telemetry. */
  emit(event: JobProgressEvent): void;
  /**
   * Passes on an event of the job's own model worker: its requests become `chat` spans under the
   * span of job `job` (opened by that job's `job_progress` start event).
   */
  onWorkerEvent(job: string, event: WorkerEvent): void;
}

/**
 * Background work a feature runs after each finished turn (memory's extract and consolidation).
 * Registered with `pod.addAfterTurnJob(job)` before the first run; a rejection becomes a warning.
 * With `runOnClose`, `pod.close()` runs it once more, bounded, so it can take in the session's
 * last turns (memory extracts the tail of a session this way).
 */
export interface AfterTurnJob {
  readonly name: string;
  readonly runOnClose?: boolean;
  run(context: AfterTurnJobContext): Promise<void>;
}

/** How long `pod.close()` lets the final pass of `runOnClose` jobs run, by default. */
export const CLOSE_PASS_TIMEOUT_MS = 30_000;

/**
 * Runs the registered after-turn jobs in the background, one pass at a time: a turn that ends
 * while a pass runs asks for one more pass afterwards (requests coalesce, nothing runs twice at
 * once). Failures never reach the turn; they go to `onError`.
 */
export class AfterTurnScheduler {
  private readonly jobs: AfterTurnJob[] = [];
  private running: Promise<void> | undefined;
  private again = false;
  private closing = false;
  private readonly controller = new AbortController();

  constructor(private readonly onError: (job: AfterTurnJob, error: unknown) => void) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get size(): number {
    return this.jobs.length;
  }

  add(job: AfterTurnJob): void {
    this.jobs.push(job);
  }

  /** Asks for a pass with a context built when the pass starts (undefined: nothing to do yet). */
  schedule(context: () => AfterTurnJobContext | undefined): void {
    if (this.jobs.length === 0 || this.closing) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.loop(context).finally(() => {
      this.running = undefined;
    });
  }

  private async loop(context: () => AfterTurnJobContext | undefined): Promise<void> {
    do {
      this.again = false;
      const ctx = context();
      if (ctx === undefined) return;
      await this.pass(this.jobs, ctx);
    } while (this.again && !this.closing);
  }

  private async pass(jobs: readonly AfterTurnJob[], ctx: AfterTurnJobContext): Promise<void> {
    for (const job of jobs) {
      if (this.controller.signal.aborted) return;
      try {
        await job.run(ctx);
      } catch (error) {
        if (!this.controller.signal.aborted) this.onError(job, error);
      }
    }
  }

  /** Resolves when no pass is running or asked for (compaction waits for this). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /**
   * Stops scheduling. Without `runOnClose` jobs the running pass is aborted. With them, the
   * running pass may finish and one final pass of those jobs runs with `context` — all within
   * `timeoutMs` and until `signal`, after which the jobs' signal fires. Never waits past that
   * bound: a job that ignores its signal is left behind, not waited for.
   */
  async close(
    context: () => AfterTurnJobContext | undefined,
    bound: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<void> {
    this.closing = true;
    const final = this.jobs.filter((job) => job.runOnClose === true);
    if (final.length === 0 && this.running === undefined) {
      // Nothing runs and nothing is to run: no deadline to arm (a timer and a dependent signal per close).
      this.controller.abort(new Error("the pod was closed"));
      return;
    }
    const limits = [AbortSignal.timeout(bound.timeoutMs), bound.signal].filter((s) => s !== undefined);
    const deadline = AbortSignal.any(limits);
    const stop = () => this.controller.abort(new Error("the pod was closed"));
    if (final.length === 0) stop();
    deadline.addEventListener("abort", stop, { once: true });
    try {
      await until(this.idle(), deadline);
      const ctx = deadline.aborted || final.length === 0 ? undefined : context();
      if (ctx !== undefined) {
        this.running = this.pass(final, ctx).finally(() => {
          this.running = undefined;
        });
        await until(this.running, deadline);
      }
    } finally {
      deadline.removeEventListener("abort", stop);
      stop();
    }
    // The jobs saw their signal fire; give them the rest of the bound to wind down, no more.
    if (!deadline.aborted) await until(this.idle(), deadline);
  }
}

/** Resolves when `work` settles or `signal` fires, whichever comes first. */
function until(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    work.then(done, done);
  });
}

/**
 * Open from a turn's `invoke` to its terminal entry. Background appends wait while it is open, so
 * an `extension` entry never lands inside a turn (a rolled-back turn would cut it away).
 */
export class TurnGate {
  private closed: Promise<void> | undefined;

  /** Opens the gate; the returned function closes it (idempotent). */
  open(): () => void {
    let close = () => {};
    this.closed = new Promise<void>((resolve) => {
      close = () => {
        this.closed = undefined;
        resolve();
      };
    });
    return close;
  }

  /** Resolves once no turn is open. */
  async passed(): Promise<void> {
    while (this.closed !== undefined) await this.closed;
  }
}
