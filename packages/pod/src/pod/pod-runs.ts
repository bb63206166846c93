import type { UsageRecord, Worker, WorkerEvent } from "@podkit/llm-worker";
import type { PodTelemetry } from "../telemetry/pod-telemetry.js";
import { PodBusyError } from "./errors.js";
import { type PodEvent, type PodRunResult, type PodTrigger, podEventOf } from "./events.js";
import { RunHandle } from "./run-handle.js";

export type Emit = (event: PodEvent) => void;

/** What run orchestration needs of its pod. */
export interface RunHost {
  readonly worker: Worker;
  readonly telemetry: PodTelemetry;
  /** `PodOptions.signal`: aborts every run of the pod. */
  readonly podSignal: AbortSignal | undefined;
  /** The head segment's usage records; every `usage` worker event is added. */
  readonly usageRecords: UsageRecord[];
  /** Hands an event to `pod.subscribe` listeners. */
  publish(event: PodEvent): void;
  /** The run prelude and one turn, persisted and closed whatever happens. */
  execute(
    trigger: PodTrigger,
    input: string | undefined,
    signal: AbortSignal,
    emit: Emit,
  ): Promise<PodRunResult>;
  /** A run ended and the pod is idle again; `turnFinished` when it finished a turn. */
  settled(turnFinished: boolean): void;
}

/**
 * One activity at a time for a pod: starts runs (their handle, abort signal, trace and event
 * fan-out to the handle, the trace and subscribers), lets `compact()` occupy the pod, and knows
 * where a warning raised mid-run goes.
 */
export class PodRuns {
  private current: Promise<unknown> | undefined;
  private controller: AbortController | undefined;
  private emitToRun: Emit | undefined;

  constructor(private readonly host: RunHost) {}

  /** True while a run (or a `compact()`) is in progress. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /** Emits `event` into the run in progress; dropped when none is. */
  emit(event: PodEvent): void {
    this.emitToRun?.(event);
  }

  /** Starts a run; `PodBusyError` while another one is in progress. */
  start(trigger: PodTrigger, input: string | undefined, signal: AbortSignal | undefined): RunHandle {
    if (this.current !== undefined) {
      throw new PodBusyError("the pod is already running a turn: one run at a time", {
        hint: "await the running handle (or pod.whenIdle()) first, or pod.interrupt() it",
      });
    }
    const controller = new AbortController();
    const signals = [controller.signal, signal, this.host.podSignal].filter((s) => s !== undefined);
    const runSignal = AbortSignal.any(signals);
    this.controller = controller;
    const tracing = this.host.telemetry.startRun({ trigger, input });
    let turnFinished = false;
    const handle = new RunHandle(async (emitToHandle) => {
      const emit: Emit = (event) => {
        tracing.onPodEvent(event);
        emitToHandle(event);
        this.host.publish(event);
      };
      this.emitToRun = emit;
      const unsubscribe = this.host.worker.subscribe((event) => {
        tracing.onWorkerEvent(event);
        this.forward(event, emit);
      });
      try {
        const result = await tracing.within(async () => {
          const outcome = await this.host.execute(trigger, input, runSignal, emit);
          if (outcome.status === "finished") turnFinished = true;
          return outcome;
        });
        emit({ type: "run_end", result });
        return result;
      } catch (error) {
        emit({ type: "run_end", result: undefined, error: error as Error });
        throw error;
      } finally {
        unsubscribe();
        this.emitToRun = undefined;
        this.controller = undefined;
      }
    });
    this.current = handle.result.finally(() => {
      this.current = undefined;
      this.host.settled(turnFinished);
    });
    this.current.catch(() => {});
    return handle;
  }

  /** Holds the pod busy while `work` runs (a `compact()`); the caller checked `busy` first. */
  async occupy<T>(work: Promise<T>): Promise<T> {
    this.current = work;
    try {
      return await work;
    } finally {
      this.current = undefined;
    }
  }

  /** Aborts the run in progress (like its signal). */
  interrupt(reason: string): void {
    this.controller?.abort(new Error(reason));
  }

  /** Resolves when no run is in progress (including the runs a settled run started). */
  async whenIdle(): Promise<void> {
    while (this.current !== undefined) await this.current.catch(() => {});
  }

  private forward(event: WorkerEvent, emit: Emit): void {
    if (event.type === "usage") this.host.usageRecords.push(event.usage);
    const podEvent = podEventOf(event);
    if (podEvent !== undefined) emit(podEvent);
  }
}
