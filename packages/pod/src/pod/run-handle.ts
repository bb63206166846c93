import { PodUsageError } from "../errors.js";
import type { PodEvent, PodRunResult } from "./events.js";

/**
 * One run of a pod: an async iterable of its events and a promise of its result, the shape
 * of the AI SDK's `streamText` and OpenAI Agents' `run(…, {stream: true})`. Iterating is
 * optional; breaking out of the loop only stops the iteration, never the run.
 */
export class RunHandle implements AsyncIterable<PodEvent>, PromiseLike<PodRunResult> {
  private readonly buffered: PodEvent[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  private iterating = false;
  readonly result: Promise<PodRunResult>;

  /** `start(emit)` runs the pod; every event it emits is buffered until iterated. */
  constructor(start: (emit: (event: PodEvent) => void) => Promise<PodRunResult>) {
    this.result = start((event) => this.push(event)).finally(() => {
      this.ended = true;
      this.wake();
    });
    // The caller may only iterate; a rejection is delivered through the iterator then.
    this.result.catch(() => {});
  }

  private push(event: PodEvent): void {
    this.buffered.push(event);
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  // biome-ignore lint/suspicious/noThenProperty: a run handle is deliberately awaitable (PromiseLike), like the AI SDK's results.
  then<A = PodRunResult, B = never>(
    onFulfilled?: ((value: PodRunResult) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.result.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<PodEvent> {
    if (this.iterating) {
      throw new PodUsageError("a run's events can be iterated once", {
        hint: "iterate the handle in one place and pass the events on from there (or use pod.subscribe)",
      });
    }
    this.iterating = true;
    for (;;) {
      const event = this.buffered.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (this.ended) break;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
    // The run_end event carried the error; rethrow it so `for await` fails like the promise.
    await this.result;
  }
}
