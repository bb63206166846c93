import type { z } from "zod";
import { PodUsageError } from "../errors.js";
import type { OutputSchemaInput } from "../output/output-schema.js";
import type { PodEvent, PodRunResult } from "./events.js";

/** What `pod.run()` takes besides the input. */
export interface PodRunOptions {
  readonly signal?: AbortSignal;
  /**
   * The typed answer's schema (a zod schema or a JSON Schema, docs/output.md): the pod's own,
   * declared when it was made or given before its session's first request; never another one.
   */
  readonly output?: OutputSchemaInput;
}

/** The handle of a run whose `output` is typed by the zod schema `S`. */
export type TypedRunHandle<S extends z.ZodType> = RunHandle<PodRunResult & { output: z.output<S> }>;

/**
 * One run of a pod: an async iterable of its events and a promise of its result, the shape
 * of the AI SDK's `streamText` and OpenAI Agents' `run(…, {stream: true})`. Iterating is
 * optional; breaking out of the loop only stops the iteration, never the run.
 */
export class RunHandle<R extends PodRunResult = PodRunResult>
  implements AsyncIterable<PodEvent>, PromiseLike<R>
{
  private readonly buffered: PodEvent[] = [];
  private waiting: (() => void) | undefined;
  private ended = false;
  private iterating = false;
  readonly result: Promise<R>;

  /** `start(emit)` runs the pod; every event it emits is buffered until iterated. */
  constructor(start: (emit: (event: PodEvent) => void) => Promise<PodRunResult>) {
    this.result = (start as (emit: (event: PodEvent) => void) => Promise<R>)((event) =>
      this.push(event),
    ).finally(() => {
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
  then<A = R, B = never>(
    onFulfilled?: ((value: R) => A | PromiseLike<A>) | null,
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
