import type { Item, WorkerEvent } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import type { PodEvent } from "./events.js";

/** What an after-turn job is given: the session's head segment, its extension state and writer. */
export interface AfterTurnJobContext {
  readonly sessionId: string;
  readonly segmentId: string;
  /** Fires when the pod closes; a job must stop promptly. */
  readonly signal: AbortSignal;
  /** The folded state of an `extension` domain (latest payload), undefined when none. */
  extension(domain: string): unknown;
  /**
   * The committed entries of the head segment, in order — or of another segment of the session
   * (one compaction left behind: memory extracts its tail), by id.
   */
  readEntries(segmentId?: string): AsyncIterable<Entry<Item>>;
  /**
   * Appends an `extension` entry through the pod's own session writer (never a second writer on
   * the segment). Waits until no turn is running, so it never lands inside a turn.
   */
  appendExtension(domain: string, payload: unknown): Promise<void>;
  /** Reports progress as pod events (`memory_job`, …) to `pod.subscribe` listeners. */
  emit(event: PodEvent): void;
  /**
   * Passes on an event of the job's own model worker: its requests become `chat` spans under the
   * job's span (opened by the `memory_job` start event of the same job).
   */
  onWorkerEvent(job: "extract" | "consolidate", event: WorkerEvent): void;
}

/**
 * Background work a feature runs after each finished turn (memory's extract and consolidation).
 * Registered with `pod.addAfterTurnJob(job)` before the first run; a rejection becomes a warning.
 */
export interface AfterTurnJob {
  readonly name: string;
  run(context: AfterTurnJobContext): Promise<void>;
}

/**
 * Runs the registered after-turn jobs in the background, one pass at a time: a turn that ends
 * while a pass runs asks for one more pass afterwards (requests coalesce, nothing runs twice at
 * once). Failures never reach the turn; they go to `onError`.
 */
export class AfterTurnScheduler {
  private readonly jobs: AfterTurnJob[] = [];
  private running: Promise<void> | undefined;
  private again = false;
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
    if (this.jobs.length === 0 || this.controller.signal.aborted) return;
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
      for (const job of this.jobs) {
        if (this.controller.signal.aborted) return;
        try {
          await job.run(ctx);
        } catch (error) {
          if (!this.controller.signal.aborted) this.onError(job, error);
        }
      }
    } while (this.again && !this.controller.signal.aborted);
  }

  /** Resolves when no pass is running or asked for (compaction waits for this). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /** Aborts the running pass (its signal fires) and waits for it to end. */
  async close(): Promise<void> {
    this.controller.abort(new Error("the pod was closed"));
    await this.idle();
  }
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
