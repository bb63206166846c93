import type { Entry } from "../entry/entry-schema.js";
import { InvalidEntryError } from "../errors.js";
import type { AppendResult } from "./session-log-types.js";

interface QueuedAppend<TItem> {
  entries: Entry<TItem>[];
  signal: AbortSignal | undefined;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
  op?: undefined;
}

interface QueuedOp {
  op: () => Promise<unknown>;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

type Queued<TItem> = QueuedAppend<TItem> | QueuedOp;

const SETTLED = Promise.resolve();

/**
 * Writes a batch of entries as one append and gives where its first entry landed: directly when
 * the write finished without waiting, else as a promise.
 */
export type BatchWriter<TItem> = (
  entries: Entry<TItem>[],
  signal: AbortSignal | undefined,
) => AppendResult | Promise<AppendResult>;

/**
 * The write queue of one log: writes run one at a time in call order, and appends that queue up
 * while a write is in flight go out together as one store append when it ends — group commit.
 * An append made while the log is idle is written at once (no added wait); appends fired without
 * awaiting each (a pod recording a step, a tool batch) share one write, one lock check and one
 * `fsync` or database round trip. Each append's promise still resolves only when its own entries
 * are committed, with their own index, so the durability promise per append is unchanged.
 * Appends coalesce only when they carry the same `AbortSignal` (or none), so an abort still
 * concerns exactly the appends it was given to. Other operations (truncate) are barriers.
 */
export class GroupCommit<TItem> {
  private readonly queue: Queued<TItem>[] = [];
  private draining = false;

  constructor(private readonly writeBatch: BatchWriter<TItem>) {}

  /** Queues `entries` as one append. */
  append(entries: Entry<TItem>[], signal: AbortSignal | undefined): Promise<AppendResult> {
    if (!this.draining) {
      // Idle: write at once (the common case of one awaited append after another), and go on
      // with whatever queued up meanwhile once it ends. A write that finished without waiting is
      // handed out as one resolved promise, and the log stays busy until the next microtask:
      // appends fired in the same synchronous run (a step's entries, a tool batch) still queue
      // up and share the next write.
      this.draining = true;
      let written: AppendResult | Promise<AppendResult>;
      try {
        written = this.writeBatch(entries, signal);
      } catch (error) {
        SETTLED.then(this.resume);
        return Promise.reject(error);
      }
      if (written instanceof Promise) {
        written.then(this.resume, this.resume);
        return written;
      }
      // A reaction on a settled promise, not `queueMicrotask`: Node wraps each of those in an
      // async resource, which cost more than the rest of this method on every append.
      SETTLED.then(this.resume);
      return Promise.resolve(written);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ entries, signal, resolve, reject });
    });
  }

  /** After a write made while idle: go on with whatever queued up meanwhile. */
  private readonly resume = (): void => {
    this.draining = false;
    if (this.queue.length > 0) void this.drain();
  };

  /** Runs `op` once every write queued before it has ended, and before any queued after it. */
  run<T>(op: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (result: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0] as Queued<TItem>;
        if (head.op !== undefined) {
          this.queue.shift();
          await attempt(head.op).then(head.resolve, head.reject);
          continue;
        }
        let count = 1;
        while (count < this.queue.length) {
          const next = this.queue[count] as Queued<TItem>;
          if (next.op !== undefined || next.signal !== head.signal) break;
          count++;
        }
        await this.commit(this.queue.splice(0, count) as QueuedAppend<TItem>[]);
      }
    } finally {
      this.draining = false;
    }
  }

  private async commit(batch: QueuedAppend<TItem>[]): Promise<void> {
    const first = batch[0] as QueuedAppend<TItem>;
    if (batch.length === 1) {
      await attempt(() => this.writeBatch(first.entries, first.signal)).then(first.resolve, first.reject);
      return;
    }
    const entries: Entry<TItem>[] = [];
    for (const queued of batch) for (const entry of queued.entries) entries.push(entry);
    let result: AppendResult;
    try {
      result = await attempt(() => this.writeBatch(entries, first.signal));
    } catch (error) {
      // An invalid entry is refused before anything is written: it must fail only its own
      // append, so the batch goes out again one append at a time.
      if (InvalidEntryError.isInstance(error)) {
        for (const queued of batch) await this.commit([queued]);
      } else {
        for (const queued of batch) queued.reject(error);
      }
      return;
    }
    let index = result.index;
    for (const queued of batch) {
      queued.resolve({ segmentId: result.segmentId, index, driftFork: result.driftFork });
      index += queued.entries.length;
    }
  }
}

/** `run()`'s result as a promise, or a rejected one if it throws before making one. */
function attempt<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    const result = run();
    return result instanceof Promise ? result : Promise.resolve(result);
  } catch (error) {
    return Promise.reject(error);
  }
}
