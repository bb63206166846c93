import {
  CancelledError,
  type Item,
  type PostToolCallDecision,
  type PreToolCallDecision,
  type ToolCallItem,
  type ToolResultItem,
  type TurnEndContext,
  type TurnEndDecision,
} from "@podkit/llm-worker";
import type { GuardrailPoint } from "@podkit/session-store";
import type { Guardrail, GuardrailContext, GuardrailOutcome, PackageGuardrail } from "@podkit/tools";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { DecisionInput } from "./approvals.js";
import { GuardrailTrippedError } from "./errors.js";

/** What the guardrails need of the pod. */
export interface PodGuardrailsOptions {
  readonly guardrails: readonly PackageGuardrail[];
  readonly podPath: readonly string[];
  readonly catalog: PromptCatalog;
  /** The turn's signal (a check that calls out must stop with the run). */
  signal(): AbortSignal;
  record(decision: DecisionInput): Promise<void>;
  /** A system item carrying `text` (a guardrail's feedback), committed like a notification. */
  feedbackItem(text: string): Item;
}

type Checked = { name: string; outcome: Exclude<GuardrailOutcome, { action: "allow" }> };

/**
 * The tool packages' guardrails at their four points (docs/permissions.md, "Guardrails"). Each
 * point runs every guardrail that has it, in load order, awaiting each before what it guards goes
 * on; the first outcome other than `allow` wins and is logged as a `policy.decision`. A check that
 * throws or answers something that is not an outcome stops the run: a guardrail fails closed.
 */
export class PodGuardrails {
  /** A `stop` that ended the run through the worker's abort: what the run's caller gets instead. */
  private tripped: GuardrailTrippedError | undefined;
  /** Feedback on the input, committed before the turn's first request. */
  private pending: Item[] = [];

  constructor(private readonly options: PodGuardrailsOptions) {}

  /** The turn starts: nothing of a previous turn is carried over. */
  startTurn(): void {
    this.tripped = undefined;
    this.pending = [];
  }

  /** The input guardrails, before the turn starts: the request waits for them. */
  async input(text: string): Promise<void> {
    const checked = await this.check("input", (g, ctx) => g.input?.({ text }, ctx), {});
    if (checked === undefined) return;
    const { name, outcome } = checked;
    if (outcome.action === "feedback") {
      this.pending.push(this.options.feedbackItem(this.feedback(name, "input", outcome.message)));
      return;
    }
    throw new GuardrailTrippedError(name, "input", outcome.action, outcome.reason);
  }

  /** Items to commit before the next request (feedback on the input). */
  takePending(): Item[] {
    return this.pending.splice(0);
  }

  /** After the mode, the rules, the hooks and the approvals let a call run: the last check before it does. */
  async beforeTool(call: ToolCallItem): Promise<PreToolCallDecision> {
    const checked = await this.check("before_tool", (g, ctx) => g.beforeTool?.(subjectOf(call), ctx), {
      call_id: call.call_id,
      tool: call.name,
    });
    if (checked === undefined) return { action: "continue" };
    const { name, outcome } = checked;
    if (outcome.action === "stop")
      throw new GuardrailTrippedError(name, "before_tool", "stop", outcome.reason);
    return {
      action: "deny",
      reason:
        outcome.action === "reject"
          ? this.rejected(name, "before_tool", outcome.reason)
          : this.feedback(name, "before_tool", outcome.message),
    };
  }

  /** After a call ran, before the model sees its result. */
  async afterTool(call: ToolCallItem, result: ToolResultItem): Promise<PostToolCallDecision> {
    const seen = {
      summary: result.summary,
      ...(result.content === undefined ? {} : { content: result.content }),
      isError: result.is_error === true,
    };
    const checked = await this.check("after_tool", (g, ctx) => g.afterTool?.(subjectOf(call), seen, ctx), {
      call_id: call.call_id,
      tool: call.name,
    });
    if (checked === undefined) return { action: "continue" };
    const { name, outcome } = checked;
    if (outcome.action === "stop") {
      // The tools ran: the worker commits every result of the batch, then the run ends.
      this.tripped = new GuardrailTrippedError(name, "after_tool", "stop", outcome.reason);
      return { action: "abort", reason: this.tripped.message };
    }
    if (outcome.action === "reject") {
      return {
        action: "rewrite",
        result: { summary: this.rejected(name, "after_tool", outcome.reason), is_error: true },
      };
    }
    const note = this.feedback(name, "after_tool", outcome.message);
    return {
      action: "rewrite",
      result: {
        summary: result.summary,
        // The model is sent the summary and the content: the note goes after both.
        content: result.content === undefined ? note : `${result.content}\n\n${note}`,
        ...(result.is_error === true ? { is_error: true } : {}),
      },
    };
  }

  /** The model answered without calls: the answer is checked before the run ends with it. */
  async finalAnswer(context: TurnEndContext): Promise<TurnEndDecision> {
    const text = context.response.map(textOf).join("");
    const checked = await this.check("final_answer", (g, ctx) => g.finalAnswer?.({ text }, ctx), {});
    if (checked === undefined) return { action: "finish" };
    const { name, outcome } = checked;
    if (outcome.action === "feedback") {
      return {
        action: "continue",
        items: [this.options.feedbackItem(this.feedback(name, "final_answer", outcome.message))],
      };
    }
    throw new GuardrailTrippedError(name, "final_answer", outcome.action, outcome.reason);
  }

  /** The error a run ends with: a guardrail's stop in place of the worker's cancellation. */
  errorOf(error: unknown): unknown {
    const tripped = this.tripped;
    this.tripped = undefined;
    return tripped !== undefined && CancelledError.isInstance(error) ? tripped : error;
  }

  private async check(
    point: GuardrailPoint,
    run: (guardrail: Guardrail, ctx: GuardrailContext) => unknown,
    about: Pick<DecisionInput, "call_id" | "tool">,
  ): Promise<Checked | undefined> {
    const signal = this.options.signal();
    const ctx: GuardrailContext = Object.freeze({ signal, podPath: this.options.podPath });
    for (const { package: pkg, guardrail } of this.options.guardrails) {
      const name = `${pkg}/${guardrail.name}`;
      let outcome: Checked["outcome"] | undefined;
      try {
        outcome = outcomeOf(await run(guardrail, ctx));
      } catch (error) {
        signal.throwIfAborted();
        outcome = {
          action: "stop",
          reason: `the guardrail failed: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
      signal.throwIfAborted();
      if (outcome === undefined) continue;
      await this.options.record({
        decided_by: "guardrail",
        outcome: outcome.action,
        ...about,
        rule: name,
        reason: outcome.action === "feedback" ? outcome.message : outcome.reason,
        point,
      });
      return { name, outcome };
    }
    return undefined;
  }

  private rejected(guardrail: string, point: GuardrailPoint, reason: string): string {
    return this.options.catalog.render("guardrail_rejected", { guardrail, point, reason });
  }

  private feedback(guardrail: string, point: GuardrailPoint, message: string): string {
    return this.options.catalog.render("guardrail_feedback", { guardrail, point, message });
  }
}

/**
 * A guardrail's answer, checked (a package is code from outside): undefined for `allow` or a point
 * the guardrail does not have; anything that is not an outcome stops the run.
 */
function outcomeOf(value: unknown): Checked["outcome"] | undefined {
  if (value === undefined) return undefined;
  const v = value as Record<string, unknown> | null;
  const action = typeof v === "object" && v !== null ? v.action : undefined;
  if (action === "allow") return undefined;
  if ((action === "reject" || action === "stop") && typeof v?.reason === "string")
    return { action, reason: v.reason };
  if (action === "feedback" && typeof v?.message === "string") return { action, message: v.message };
  return {
    action: "stop",
    reason: `the guardrail answered ${JSON.stringify(value) ?? String(value)}, which is not an outcome (allow, reject with a reason, feedback with a message, stop with a reason)`,
  };
}

function subjectOf(call: ToolCallItem): { callId: string; name: string; arguments: string } {
  return Object.freeze({ callId: call.call_id, name: call.name, arguments: call.arguments });
}

function textOf(item: Item): string {
  if (item.type !== "message") return "";
  return item.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
