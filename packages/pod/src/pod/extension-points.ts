import type { WarningSink } from "../warnings.js";
import { type AfterTurnJob, AfterTurnScheduler, TurnGate } from "./after-turn-jobs.js";
import { HooksFrozenError } from "./errors.js";
import type { PodHooks } from "./hooks.js";

/**
 * What features plug into a pod (hooks, after-turn jobs) and the gate that keeps background
 * writes out of a turn. Hooks and jobs are registered before the first run only: the first run
 * composes them into the worker's interceptor once (`freeze`). Event subscribers are the event
 * hub's (`PodEventHub`).
 */
export class PodExtensionPoints {
  readonly hooks: PodHooks[] = [];
  readonly afterTurn: AfterTurnScheduler;
  /** Open from a turn's invoke to its terminal entry: background extension appends wait for it. */
  readonly turnGate = new TurnGate();
  private isFrozen = false;

  /** An after-turn job's failure is a `pod.after_turn_job` warning. */
  constructor(warn: WarningSink) {
    this.afterTurn = new AfterTurnScheduler((job, error) =>
      warn({
        code: "pod.after_turn_job",
        message: `after-turn job "${job.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
      }),
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
}
