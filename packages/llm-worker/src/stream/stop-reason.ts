import type { LanguageModelV3FinishReason } from "@ai-sdk/provider";

/**
 * Why a response ended, in one vocabulary for every provider. `pause` is Anthropic's
 * `pause_turn` (a long server-tool turn the API paused; the worker sends the conversation back
 * so the model continues); the AI SDK reports it as `stop`, so it is recognised from the raw value.
 */
export type StopReasonKind =
  | "stop"
  | "tool-calls"
  | "length"
  | "content-filter"
  | "pause"
  | "error"
  | "other";

/** A response's stop reason: the unified kind and the provider's own value (`max_tokens`, `SAFETY`, …). */
export interface StopReason {
  kind: StopReasonKind;
  /** The value exactly as the provider sent it; undefined when the stream carried none. */
  raw: string | undefined;
}

/** Maps the AI SDK's finish reason to a stop reason; a stream that broke or never finished is `error`. */
export function toStopReason(finish: LanguageModelV3FinishReason | undefined, broke: boolean): StopReason {
  if (finish === undefined) return { kind: broke ? "error" : "other", raw: undefined };
  if (finish.raw === "pause_turn") return { kind: "pause", raw: finish.raw };
  return { kind: broke ? "error" : finish.unified, raw: finish.raw };
}
