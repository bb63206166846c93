import type { Worker, WorkerEvent } from "@podkit/llm-worker";
import type { PodTelemetry } from "../telemetry/pod-telemetry.js";
import { TRACED_POD_EVENTS, TRACED_WORKER_EVENTS } from "../telemetry/run-trace.js";
import type { WarningSink } from "../warnings.js";
import { PodBusyError } from "./errors.js";
import { type PodRunResult, type PodTrigger, podEventOf } from "./events.js";
import type { PodEventHub } from "./pod-events.js";
import { RunHandle } from "./run-handle.js";

/** What a run does, given by the pod: its prelude and one turn, and what follows its end. */
export interface RunDriver {
  /** The run prelude and one turn, persisted and closed whatever happens. */
  execute(trigger: PodTrigger, input: string | undefined, signal: AbortSignal): Promise<PodRunResult>;
  /** A run ended and the pod is idle again; `turnFinished` when it finished a turn. */
  settled(turnFinished: boolean): void;
}

/** Where runs show what they do. */
export interface RunOutlets {
  readonly worker: Worker;
  readonly telemetry: PodTelemetry;
  readonly events: PodEventHub;
  readonly warn: WarningSink;
  /** `PodOptions.signal`: aborts every run of the pod. */
  readonly podSignal: AbortSignal | undefined;
}

/**
 * One activity at a time for a pod: starts runs (their handle, abort signal and trace, with the
 * run's events routed into the handle and the trace) and lets `compact()` occupy the pod. Every
 * run ends with exactly one `run_end`.
 */
export class PodRuns {
  private current: Promise<unknown> | undefined;
  private controller: AbortController | undefined;

  constructor(
    private readonly outlets: RunOutlets,
    private readonly driver: RunDriver,
  ) {}

  /** True while a run (or a `compact()`) is in progress. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /** Starts a run; `PodBusyError` while another one is in progress. */
  start(trigger: PodTrigger, input: string | undefined, signal: AbortSignal | undefined): RunHandle {
    if (this.current !== undefined) {
      throw new PodBusyError("the pod is already running a turn: one run at a time", {
        hint: "await the running handle (or pod.whenIdle()) first, or pod.interrupt() it",
      });
    }
    const { worker, telemetry, events } = this.outlets;
    const controller = new AbortController();
    const runSignal = anySignal([controller.signal, signal, this.outlets.podSignal]);
    this.controller = controller;
    // Undefined when nothing can record the run: its events then go to the handle alone.
    const tracing = telemetry.startRun({ trigger, input });
    let turnFinished = false;
    const handle = new RunHandle(async (emitToHandle) => {
      // The trace gets only the events it records (TRACED_*): a text delta costs it nothing.
      const detach = events.attachRun(
        tracing === undefined
          ? emitToHandle
          : (event) => {
              if (TRACED_POD_EVENTS.has(event.type)) tracing.onPodEvent(event);
              emitToHandle(event);
            },
      );
      const unsubscribe = worker.subscribe(
        tracing === undefined
          ? (event) => this.show(event)
          : (event) => {
              if (TRACED_WORKER_EVENTS.has(event.type)) tracing.onWorkerEvent(event);
              this.show(event);
            },
      );
      let ended: { result: PodRunResult } | { error: Error };
      try {
        const execute = () => this.driver.execute(trigger, input, runSignal);
        const result = await (tracing === undefined ? execute() : tracing.within(execute));
        turnFinished = result.status === "finished";
        ended = { result };
      } catch (error) {
        ended = { error: error as Error };
      } finally {
        unsubscribe();
      }
      // Exactly one run_end, after the turn is saved; listeners cannot throw into here (the hub isolates them).
      events.emit(
        "result" in ended
          ? { type: "run_end", result: ended.result }
          : { type: "run_end", result: undefined, error: ended.error },
      );
      detach();
      this.controller = undefined;
      if ("error" in ended) throw ended.error;
      return ended.result;
    });
    this.current = handle.result.finally(() => {
      this.current = undefined;
      this.driver.settled(turnFinished);
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

  /** A worker event, for display: a pod event, or a `pod.worker` warning (warnings have one channel). */
  private show(event: WorkerEvent): void {
    if (event.type === "warning") {
      this.outlets.warn({ code: "pod.worker", message: event.message });
      return;
    }
    const podEvent = podEventOf(event);
    if (podEvent !== undefined) this.outlets.events.emit(podEvent);
  }
}

/**
 * A signal that aborts when any of `signals` does (one that never aborts when none is given): the
 * only one given is itself, without the cost of `AbortSignal.any` (a dependent signal, weakly
 * tracked, made on every run of a pod that has no signal of its own).
 */
export function anySignal(signals: readonly (AbortSignal | undefined)[]): AbortSignal {
  const given = signals.filter((s) => s !== undefined);
  if (given.length === 0) return new AbortController().signal;
  return given.length === 1 ? (given[0] as AbortSignal) : AbortSignal.any(given);
}
