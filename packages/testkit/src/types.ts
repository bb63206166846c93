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
    }
  /**
   * A tool the provider runs itself. Anthropic: a `server_tool_use` block (`mcp_tool_use` with
   * `mcpServer`); OpenAI Responses: a `web_search_call` or (with `mcpServer`) `mcp_call` output
   * item opened here and completed by the matching result; Gemini: `executableCode` for
   * `code_execution`, else a server `toolCall` part. Chat Completions has none.
   */
  | {
      type: "server_tool_call";
      id?: string;
      name: string;
      input: Record<string, unknown>;
      mcpServer?: string;
      chunkSize?: number;
    }
  /**
   * The provider's result of a server tool call, in the wire's own shape: Anthropic, the
   * `content` of the `<name>_tool_result` (or `mcp_tool_result`) block; OpenAI Responses, the
   * fields that complete the output item (`action`, or an MCP `output`); Gemini, the
   * `codeExecutionResult` or the server `toolResponse.response`. `toolCallId` defaults to the
   * last server tool call of the script.
   */
  | {
      type: "server_tool_result";
      toolCallId?: string;
      name: string;
      result: unknown;
      isError?: boolean;
      mcpServer?: string;
    }
  /** An Anthropic compaction block (the API's summary of earlier context), streamed as `compaction_delta`s. */
  | { type: "compaction"; text: string; chunkSize?: number }
  /**
   * An error object inside the stream, in the wire's own shape (Anthropic `error` event,
   * Responses `error` event, `{"error": …}` in a normal Chat or Gemini chunk). The stream ends
   * after it, without a finish event.
   */
  | { type: "error"; error: Record<string, unknown> }
  /** One event sent exactly as given (`data` is JSON-encoded unless it is a string), e.g. an out-of-order event. */
  | { type: "raw"; event?: string; data: unknown };

/**
 * Why a scripted response ends, in the double's vocabulary; each wire sends its own value
 * (`content_filter` is Anthropic `refusal`, Gemini `SAFETY`; `pause_turn` exists only on Anthropic).
 */
export type ScriptedFinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "pause_turn";

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
      finishReason?: ScriptedFinishReason;
      /** Anthropic only: the code-execution container the response ran in (`message_delta.delta.container`). */
      container?: { id: string; expiresAt: string };
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
