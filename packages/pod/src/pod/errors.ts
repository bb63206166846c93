import type { ErrorKind } from "@podkit/llm-worker";
import type { GuardrailPoint } from "@podkit/session-store";
import { hasMarker, PodkitPodError } from "../errors.js";

const BUSY_MARKER = Symbol.for("podkit.pod.error.busy");

/** `run()`/`resume()` was called while another run of the same pod is still in progress. */
export class PodBusyError extends PodkitPodError {
  readonly [BUSY_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  override name = "PodBusyError";

  static override isInstance(error: unknown): error is PodBusyError {
    return hasMarker(error, BUSY_MARKER);
  }
}

const HOOKS_FROZEN_MARKER = Symbol.for("podkit.pod.error.hooks-frozen");

/** Hooks were registered after the pod's first run, when its interceptor is already installed. */
export class HooksFrozenError extends PodkitPodError {
  readonly [HOOKS_FROZEN_MARKER] = true;
  override name = "HooksFrozenError";

  static override isInstance(error: unknown): error is HooksFrozenError {
    return hasMarker(error, HOOKS_FROZEN_MARKER);
  }
}

const PROMPT_CANCELLED_MARKER = Symbol.for("podkit.pod.error.prompt-cancelled");

/** An `onPromptSubmit` hook cancelled the input before anything was written or sent. */
export class PromptCancelledError extends PodkitPodError {
  readonly [PROMPT_CANCELLED_MARKER] = true;
  override name = "PromptCancelledError";
  readonly reason: string | undefined;

  constructor(reason: string | undefined) {
    super(reason ? `the prompt was cancelled by a hook: ${reason}` : "the prompt was cancelled by a hook");
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is PromptCancelledError {
    return hasMarker(error, PROMPT_CANCELLED_MARKER);
  }
}

const CLOSED_MARKER = Symbol.for("podkit.pod.error.closed");

/** The pod was closed (its tools shut down); it cannot run again. */
export class PodClosedError extends PodkitPodError {
  readonly [CLOSED_MARKER] = true;
  /** This pod's state, not the session's: a pod restored anew runs it. */
  override readonly errorKind: ErrorKind = "conflict";
  override name = "PodClosedError";

  static override isInstance(error: unknown): error is PodClosedError {
    return hasMarker(error, CLOSED_MARKER);
  }
}

const GUARDRAIL_TRIPPED_MARKER = Symbol.for("podkit.pod.error.guardrail-tripped");

/**
 * A guardrail rejected the input or the final answer, or stopped the run (docs/permissions.md,
 * "Guardrails"). Its `policy.decision` entry is in the log; a rejected input never reached it.
 */
export class GuardrailTrippedError extends PodkitPodError {
  readonly [GUARDRAIL_TRIPPED_MARKER] = true;
  override name = "GuardrailTrippedError";

  constructor(
    /** `<package>/<name>` of the guardrail. */
    readonly guardrail: string,
    readonly point: GuardrailPoint,
    readonly outcome: "reject" | "stop",
    readonly reason: string,
  ) {
    super(
      `${outcome === "reject" ? `the guardrail ${guardrail} rejected the ${point === "input" ? "input" : point === "final_answer" ? "final answer" : "tool call"}` : `the guardrail ${guardrail} stopped the run (${point.replace("_", " ")})`}: ${reason}`,
      {
        hint:
          point === "input"
            ? "nothing was sent to the model; change the input, or the guardrail's package if it is wrong"
            : "the session log holds the decision (`podkit session show`); resume or run again once it is dealt with",
      },
    );
  }

  static override isInstance(error: unknown): error is GuardrailTrippedError {
    return hasMarker(error, GUARDRAIL_TRIPPED_MARKER);
  }
}
