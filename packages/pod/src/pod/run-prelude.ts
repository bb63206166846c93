import type { PodBudget } from "../budget/pod-budget.js";
import type { PodTelemetry } from "../telemetry/pod-telemetry.js";
import { PromptCancelledError } from "./errors.js";
import type { PodRunResult, PodTrigger } from "./events.js";
import type { PodExtensionPoints } from "./extension-points.js";
import type { CompactionReporting } from "./pod-compaction.js";
import type { PodEngine } from "./pod-engine.js";
import type { PodEventHub } from "./pod-events.js";

/** What a run's prelude and turn use of the pod. */
export interface RunParts {
  readonly engine: PodEngine;
  readonly extensionPoints: PodExtensionPoints;
  readonly events: PodEventHub;
  readonly telemetry: PodTelemetry;
  readonly budget: PodBudget | undefined;
}

/**
 * One run of a pod: the prelude in the order of docs/pod.md — the interceptor composed at the first
 * run, the system prompt materialized and the session created, a crashed turn closed, a compaction
 * before the turn when due (not while a run awaiting approval is resumed: it continues the very
 * batch it stopped in), the `onPromptSubmit` hooks — then one turn under the budget, persisted and
 * closed whatever happens.
 */
export async function runWithPrelude(
  parts: RunParts,
  trigger: PodTrigger,
  input: string | undefined,
  signal: AbortSignal,
): Promise<PodRunResult> {
  const { engine, extensionPoints, telemetry, budget } = parts;
  if (!extensionPoints.frozen) {
    engine.installInterceptor(extensionPoints.hooks);
    extensionPoints.freeze();
  }
  const systemPrompt = await engine.ensureSystemPromptMaterialized();
  if (await engine.recorder.closeCrashedTurn(await engine.ensureSessionHead(systemPrompt)))
    engine.turns.ended("awaiting_approval");
  const report: CompactionReporting = {
    emit: (event) => parts.events.emit(event),
    workerEvent: (event) => telemetry.onCompactionWorkerEvent(event),
  };
  // A background job (memory extract) reads the segment a compaction replaces: let it finish first.
  const awaitingApproval = engine.log?.state.awaitingApproval === true;
  if (engine.compactionDueBeforeTurn && !awaitingApproval) await extensionPoints.afterTurn.idle();
  if (!awaitingApproval) await engine.compactBeforeTurn(signal, report);
  // Skills changed on disk reach the model as a notification, never as a change to its prefix.
  await engine.skills?.announceChanges();
  if (input !== undefined) {
    for (const hook of extensionPoints.hooks) {
      const decision = await hook.onPromptSubmit?.(Object.freeze({ text: input }), engine.hookPod());
      if (decision?.action === "cancel") throw new PromptCancelledError(decision.reason);
    }
  }
  engine.guardrails.startTurn();
  engine.output?.startRun();
  // The input guardrails hold the request: nothing is sent (or written) before they pass.
  if (input !== undefined) await engine.guardrails.input(input);
  // Open from the turn's invoke to its terminal entry: background extension appends wait for it.
  const closeTurnGate = extensionPoints.turnGate.open();
  try {
    await budget?.startRun();
    return await engine.runTurn({ trigger, input, signal, report, budgetStop: () => budget?.stopped });
  } finally {
    budget?.endRun();
    closeTurnGate();
  }
}
