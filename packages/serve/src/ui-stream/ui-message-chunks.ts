import type { PodEvent } from "@podkit/pod";

/**
 * One chunk of the AI SDK's UI message stream protocol (`ai` 6.x, `x-vercel-ai-ui-message-stream: v1`),
 * as far as a pod's run produces them. Written as `data: <json>` SSE events, ended by `data: [DONE]`.
 */
export type UiMessageChunk =
  | { type: "start"; messageId: string; messageMetadata: { sessionId: string } }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown; dynamic: true }
  | { type: "tool-output-available"; toolCallId: string; output: unknown; dynamic: true }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; dynamic: true }
  | { type: "error"; errorText: string }
  | { type: "abort"; reason?: string }
  | {
      type: "finish";
      finishReason: "stop" | "length" | "other" | "error";
      messageMetadata: { sessionId: string };
    };

/**
 * Translates one run's pod events into UI message chunks: each model request is a step, text and
 * reasoning open a part on their first delta and close it when something else starts, tool calls
 * are dynamic tool parts with their outcome. Keeps only which part is open.
 */
export class UiMessageChunks {
  private open: { kind: "text" | "reasoning"; id: string } | undefined;
  private inStep = false;
  private parts = 0;

  constructor(
    private readonly messageId: string,
    private readonly sessionId: string,
  ) {}

  /** The chunk that opens the message. */
  start(): UiMessageChunk[] {
    return [{ type: "start", messageId: this.messageId, messageMetadata: { sessionId: this.sessionId } }];
  }

  /** The chunks of one pod event (none for events the protocol has no part for). */
  of(event: PodEvent): UiMessageChunk[] {
    switch (event.type) {
      case "request_start":
        return [...this.closePart(), ...this.endStep(), { type: "start-step" }, ...this.began()];
      case "text_delta":
      case "reasoning_delta": {
        const kind = event.type === "text_delta" ? "text" : "reasoning";
        const opening = this.open?.kind === kind ? [] : [...this.closePart(), ...this.openPart(kind)];
        const id = (this.open as { id: string }).id;
        return [...opening, { type: `${kind}-delta`, id, delta: event.delta }];
      }
      case "tool_call_start":
        return [
          ...this.closePart(),
          {
            type: "tool-input-available",
            toolCallId: event.callId,
            toolName: event.name,
            input: parseArguments(event.arguments),
            dynamic: true,
          },
        ];
      case "tool_call_end":
        return [
          event.isError
            ? { type: "tool-output-error", toolCallId: event.callId, errorText: event.summary, dynamic: true }
            : {
                type: "tool-output-available",
                toolCallId: event.callId,
                output: event.summary,
                dynamic: true,
              },
        ];
      default:
        return [];
    }
  }

  /** The closing chunks of a run that ended with `status` (or failed with `error`, or was interrupted). */
  finish(outcome: { status?: string; error?: string; interrupted?: boolean }): UiMessageChunk[] {
    const closing = [...this.closePart(), ...this.endStep()];
    if (outcome.interrupted === true)
      return [...closing, { type: "abort", reason: "the run was interrupted" }];
    if (outcome.error !== undefined) {
      return [
        ...closing,
        { type: "error", errorText: outcome.error },
        { type: "finish", finishReason: "error", messageMetadata: { sessionId: this.sessionId } },
      ];
    }
    const finishReason =
      outcome.status === "finished" ? "stop" : outcome.status === "limit_reached" ? "length" : "other";
    return [...closing, { type: "finish", finishReason, messageMetadata: { sessionId: this.sessionId } }];
  }

  private began(): UiMessageChunk[] {
    this.inStep = true;
    return [];
  }

  private endStep(): UiMessageChunk[] {
    if (!this.inStep) return [];
    this.inStep = false;
    return [{ type: "finish-step" }];
  }

  private openPart(kind: "text" | "reasoning"): UiMessageChunk[] {
    this.parts += 1;
    const id = `${this.messageId}-${this.parts}`;
    this.open = { kind, id };
    return [{ type: `${kind}-start`, id }];
  }

  private closePart(): UiMessageChunk[] {
    const open = this.open;
    if (open === undefined) return [];
    this.open = undefined;
    return [{ type: `${open.kind}-end`, id: open.id }];
  }
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
