import { type AfterTurnJob, AfterTurnScheduler, TurnGate } from "./after-turn-jobs.js";
import { HooksFrozenError } from "./errors.js";
import type { PodEvent } from "./events.js";
import type { PodHooks } from "./hooks.js";

/**
 * What features plug into a pod (hooks, after-turn jobs, event subscribers) and the gate that keeps
 * background writes out of a turn. Hooks and jobs are registered before the first run only: the
 * first run composes them into the worker's interceptor once (`freeze`).
 */
export class PodExtensionPoints {
  readonly hooks: PodHooks[] = [];
  readonly afterTurn: AfterTurnScheduler;
  /** Open from a turn's invoke to its terminal entry: background extension appends wait for it. */
  readonly turnGate = new TurnGate();
  private readonly listeners = new Set<(event: PodEvent) => void>();
  private isFrozen = false;

  /** `onJobFailed` receives the warning text of an after-turn job's failure. */
  constructor(onJobFailed: (message: string) => void) {
    this.afterTurn = new AfterTurnScheduler((job, error) =>
      onJobFailed(
        `after-turn job "${job.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }

  /** True once the first run composed the hooks. */
  get frozen(): boolean {
    return this.isFrozen;
  }

  freeze(): void {
    this.isFrozen = true;
  }

  addHooks(hooks: PodHooks): void {
    if (this.isFrozen) {
      throw new HooksFrozenError("hooks cannot be registered after the pod's first run", {
        hint: "register every hook right after Pod.fromManifest / Pod.restore",
      });
    }
    this.hooks.push(hooks);
  }

  addAfterTurnJob(job: AfterTurnJob): void {
    if (this.isFrozen) {
      throw new HooksFrozenError("after-turn jobs cannot be registered after the pod's first run", {
        hint: "register them right after Pod.fromManifest / Pod.restore",
      });
    }
    this.afterTurn.add(job);
  }

  subscribe(listener: (event: PodEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: PodEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
