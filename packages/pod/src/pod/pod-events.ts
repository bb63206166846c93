import type { WarningSink } from "../warnings.js";
import type { PodEvent } from "./events.js";

type Listener = (event: PodEvent) => void;

/**
 * Where a pod's events go: the run in progress (its handle and trace) and every `pod.subscribe`
 * listener. Listeners are isolated from the pod and from each other: one that throws is reported
 * once as a `pod.listener` warning and the event goes on to the others, so a display can never
 * fail a run whose turn was already saved.
 */
export class PodEventHub {
  private readonly listeners = new Set<Listener>();
  /** Listeners that threw already (reported once each, not once per event). */
  private readonly failed = new WeakSet<Listener>();
  private run: Listener | undefined;

  constructor(private readonly warn: WarningSink) {}

  /** Adds a listener of every event, those of runs and those of background jobs; returns an unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An event of the pod: into the run in progress (when there is one), then to every listener. */
  emit(event: PodEvent): void {
    this.run?.(event);
    this.publish(event);
  }

  /** A background job's event: to the listeners only, never into a run's handle or trace. */
  publish(event: PodEvent): void {
    if (this.listeners.size === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        if (this.failed.has(listener)) continue;
        this.failed.add(listener);
        const message = error instanceof Error ? error.message : String(error);
        try {
          this.warn({
            code: "pod.listener",
            message: `a pod.subscribe listener threw on a ${event.type} event (${message}); the pod went on, and further errors of this listener are not reported`,
          });
        } catch {
          // The sink is the last place a warning can go; a sink that throws must not reach the run either.
        }
      }
    }
  }

  /** Sends `emit`ted events to the run's handle and trace until the returned function is called. */
  attachRun(run: Listener): () => void {
    this.run = run;
    return () => {
      if (this.run === run) this.run = undefined;
    };
  }
}
