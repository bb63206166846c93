/** The four streaming wire formats the provider double speaks. */
export type Wire = "anthropic" | "openai-chat" | "openai-responses" | "google";

/**
 * Token usage a scripted response reports. `inputTokens` is the whole prompt (cached or not), as the AI SDK
 * reports it in `usage.inputTokens.total`; `outputTokens` includes `reasoningTokens`.
 */
export interface ScriptedUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/** One piece of scripted model output, rendered in the wire's native streaming events. */
export type ScriptedPart =
  | { type: "text"; text: string; chunkSize?: number }
  | { type: "reasoning"; text: string; signature?: string; chunkSize?: number }
  | { type: "redacted_reasoning"; data: string }
  | {
      type: "tool_call";
      id?: string;
      name: string;
      arguments: string | Record<string, unknown>;
      chunkSize?: number;
      thoughtSignature?: string;
    };

/** A fault injected into one response. `afterEvents` counts SSE events written before the fault. */
export type Fault =
  | { kind: "status"; status: number; retryAfter?: string | number; body?: string }
  | { kind: "reset"; afterEvents: number }
  | { kind: "stall"; afterEvents: number; ms: number }
  | { kind: "malformed"; afterEvents: number };

/** What the double answers to one request: scripted parts, raw recorded chunks, or an HTTP error. */
export type ScriptedResponse =
  | {
      parts: ScriptedPart[];
      usage?: ScriptedUsage;
      finishReason?: "stop" | "tool_calls" | "length";
      id?: string;
      fault?: Fault;
    }
  | { chunks: string[]; fault?: Fault }
  | { fault: Fault & { kind: "status" } };

/** A request as the double received it, kept for assertions. */
export interface CapturedRequest {
  method: string;
  path: string;
  url: string;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of arbitrary provider request shapes; tests index into it freely.
  body: any;
  rawBody: string;
  receivedAt: number;
}

/** One server-sent event: an optional `event:` name and the `data:` payload. */
export interface SseEvent {
  event?: string;
  data: string;
}
