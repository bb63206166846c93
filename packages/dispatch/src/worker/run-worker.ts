import { hostname } from "node:os";
import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { Pod, PodOptions } from "@podkit/pod";
import type { Store } from "@podkit/session-store";
import type { Dispatcher } from "../dispatcher.js";
import { DispatchError, UnknownPodError } from "../errors.js";
import { type AttemptHost, executeClaim, type RunWorkerEvent } from "./execute-run.js";

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Options of a `RunWorker`. */
export interface RunWorkerOptions {
  readonly dispatcher: Dispatcher;
  /** The session store every pod writes through (the caller closes it). */
  readonly store: Store<Item>;
  /** The manifests of the pods this worker serves, one per `[pod] name`. */
  readonly manifests: readonly LoadedManifest[];
  /** Runs in progress at once (default 1). */
  readonly concurrency?: number;
  /** Options of every pod (model override, env, tool packages, warnings); not `store`/`signal`. */
  readonly podOptions?: (pod: string) => PodOptions;
  /** Prepares each pod before its run (e.g. `attachMemory`). */
  readonly preparePod?: (pod: Pod) => void;
  /** Receives what the worker does, for display. */
  readonly onEvent?: (event: RunWorkerEvent) => void;
  /** Name recorded in each attempt's "started" entry (default `<hostname>:<pid>`). */
  readonly workerName?: string;
}

/**
 * Claims runs of its pods from a dispatcher and runs them (`concurrency` at a time): each attempt
 * restores the session from the log and continues where the log says the run stands, so any
 * worker on any machine can take over a run whose worker died. `drain()` stops claiming and lets
 * the runs in progress finish; `stop()` also hands them back, to be resumed by another worker.
 */
export class RunWorker {
  private readonly manifests = new Map<string, LoadedManifest>();
  private readonly claiming = new AbortController();
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: RunWorkerOptions) {
    for (const loaded of options.manifests) {
      const name = loaded.manifest.pod.name;
      if (this.manifests.has(name)) {
        throw new DispatchError(`two manifests of this worker define pod "${name}"`, {
          hint: "give each pod its own [pod] name",
        });
      }
      this.manifests.set(name, loaded);
    }
  }

  /** The pods served. */
  get pods(): string[] {
    return [...this.manifests.keys()];
  }

  /**
   * Registers the `[[schedule]]` entries of the served manifests with the dispatcher (and removes
   * schedules a manifest no longer has), then claims and runs until drained or stopped; resolves
   * when the last run in progress has settled.
   */
  start(): Promise<void> {
    this.running ??= this.work();
    return this.running;
  }

  /** Claims nothing more; the runs in progress finish. */
  drain(): void {
    this.claiming.abort(new DispatchError("the worker is draining"));
  }

  /** Claims nothing more and interrupts the runs in progress, handing them back to the queue. */
  stop(): void {
    this.drain();
    this.stopping.abort(new DispatchError("the worker was stopped"));
  }

  private async work(): Promise<void> {
    await this.registerSchedules();
    const host = this.attemptHost();
    const slots = Array.from({ length: Math.max(1, this.options.concurrency ?? 1) }, async () => {
      let backoffMs = 0;
      while (!this.claiming.signal.aborted) {
        try {
          const claim = await this.options.dispatcher.claim({
            pods: this.pods,
            signal: this.claiming.signal,
          });
          if (claim === undefined) return;
          backoffMs = 0;
          await executeClaim(host, claim);
        } catch (error) {
          // The dispatcher could not claim (its database is down): wait, then try again.
          backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, backoffMs * 2));
          this.options.onEvent?.({
            type: "warning",
            message: `claiming failed, retrying in ${backoffMs} ms: ${String(error)}`,
          });
          await sleep(backoffMs, this.claiming.signal);
        }
      }
    });
    await Promise.all(slots);
  }

  /** Registers the served manifests' schedules; a failure is a warning (the next start registers them). */
  private async registerSchedules(): Promise<void> {
    const { dispatcher } = this.options;
    for (const [pod, loaded] of this.manifests) {
      try {
        for (const schedule of loaded.manifest.schedule) {
          await dispatcher.schedule({
            pod,
            name: schedule.name,
            cron: schedule.cron,
            ...(schedule.tz === undefined ? {} : { tz: schedule.tz }),
          });
        }
        await dispatcher.unscheduleOthers(
          pod,
          loaded.manifest.schedule.map((schedule) => schedule.name),
        );
      } catch (error) {
        this.options.onEvent?.({
          type: "warning",
          message: `schedules of pod "${pod}" not registered: ${String(error)}`,
        });
      }
    }
  }

  private attemptHost(): AttemptHost {
    const { options } = this;
    return {
      dispatcher: options.dispatcher,
      store: options.store,
      manifestOf: (pod) => {
        const loaded = this.manifests.get(pod);
        if (loaded === undefined) throw new UnknownPodError(pod, this.pods);
        return loaded;
      },
      podOptions: (pod) => options.podOptions?.(pod) ?? {},
      ...(options.preparePod === undefined ? {} : { preparePod: options.preparePod }),
      workerName: options.workerName ?? `${hostname()}:${process.pid}`,
      stopping: this.stopping.signal,
      emit: (event) => options.onEvent?.(event),
    };
  }
}
