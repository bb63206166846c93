import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { APICallError } from "@ai-sdk/provider";
import { AbortedError } from "../errors.js";
import { AttemptTimeout, toProviderError } from "../retry/classify-error.js";
import { backoffDelay, type RetryPolicy, retryAfterMs } from "../retry/retry-policy.js";
import { type CollectedResponse, collectResponse, emptyResponse } from "../stream/collect-response.js";
import type { WorkerEvent } from "./events.js";

export interface RequestContext {
  model: LanguageModelV3;
  provider: string;
  policy: RetryPolicy;
  signal: AbortSignal;
  emit(event: WorkerEvent): void;
  /** The number of this request within the run (from 1). */
  request: number;
  continuation: number;
}

/** Arms the first-event and idle watchdogs of one attempt; each abort carries an `AttemptTimeout`. */
class Watchdog {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private began = false;

  constructor(
    private readonly controller: AbortController,
    private readonly policy: RetryPolicy,
  ) {
    this.arm(policy.firstEventTimeoutMs, "first-event");
  }

  private arm(ms: number, phase: "first-event" | "idle"): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(new AttemptTimeout(phase, ms)), ms);
  }

  firstContent(): void {
    this.began = true;
    this.arm(this.policy.idleTimeoutMs, "idle");
  }

  part(): void {
    if (this.began) this.arm(this.policy.idleTimeoutMs, "idle");
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

async function attempt(
  ctx: RequestContext,
  options: LanguageModelV3CallOptions,
): Promise<{ response: CollectedResponse; timedOut: AbortSignal }> {
  const controller = new AbortController();
  const watchdog = new Watchdog(controller, ctx.policy);
  const abortSignal = AbortSignal.any([ctx.signal, controller.signal]);
  try {
    const { stream } = await ctx.model.doStream({ ...options, abortSignal });
    const response = await collectResponse(stream, {
      onFirstContent: () => watchdog.firstContent(),
      onPart: () => watchdog.part(),
      onTextDelta: (delta) => ctx.emit({ type: "text_delta", delta }),
      onReasoningDelta: (delta) => ctx.emit({ type: "reasoning_delta", delta }),
      onToolInputDelta: (callId, name, delta) => ctx.emit({ type: "tool_input_delta", callId, name, delta }),
    });
    return { response, timedOut: controller.signal };
  } catch (error) {
    return { response: emptyResponse(error ?? new Error("the request failed")), timedOut: controller.signal };
  } finally {
    watchdog.stop();
  }
}

/**
 * Streams one response. Failures before any content are retried per the policy (honouring
 * `Retry-After`); a stream that breaks after content began is returned with `error` set so
 * the caller can continue it. Throws `ProviderError` when retries are exhausted or the failure
 * is not retryable, and `AbortedError` when the caller's signal fires.
 */
export async function requestWithRetry(
  ctx: RequestContext,
  options: LanguageModelV3CallOptions,
): Promise<CollectedResponse> {
  const { policy } = ctx;
  const started = policy.clock.now();
  for (let attemptNo = 1; ; attemptNo++) {
    ctx.emit({
      type: "request_start",
      request: ctx.request,
      attempt: attemptNo,
      continuation: ctx.continuation,
    });
    const { response, timedOut } = await attempt(ctx, options);
    if (ctx.signal.aborted) throw new AbortedError(undefined, { cause: ctx.signal.reason });
    for (const warning of response.warnings) ctx.emit({ type: "warning", message: warning });
    if (response.error === undefined) return response;
    if (timedOut.aborted) response.error = timedOut.reason;
    if (response.began) return response;
    const error = toProviderError(response.error, ctx.provider, attemptNo, response.lastPartType);
    if (!error.isRetryable || attemptNo >= policy.maxAttempts) throw error;
    const headers = APICallError.isInstance(response.error) ? response.error.responseHeaders : undefined;
    const delay = retryAfterMs(headers, policy.clock.now()) ?? backoffDelay(policy, attemptNo);
    if (policy.clock.now() - started + delay > policy.totalBudgetMs) throw error;
    ctx.emit({ type: "retry", attempt: attemptNo, delayMs: delay, error });
    try {
      await policy.sleep(delay, ctx.signal);
    } catch (cause) {
      throw new AbortedError(undefined, { cause });
    }
  }
}
