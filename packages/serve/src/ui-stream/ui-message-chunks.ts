import type { PodEvent } from "@podkit/pod";

type OutputPartial = Extract<PodEvent, { type: "output_partial" }>;

/** The data of a `data-output-partial` part: the answer so far and every array element completed so far. */
export interface OutputPartialData {
  callId: string;
  partial: OutputPartial["partial"];
  elements: OutputPartial["elements"];
}

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
  /** A typed answer as it streams; the same `id` (the call's) replaces the part's data each time. */
  | { type: "data-output-partial"; id: string; data: OutputPartialData }
  /** The run's typed answer, checked against the output schema (docs/output.md). */
  | { type: "data-output"; data: unknown }
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
 * are dynamic tool parts with their outcome, a typed answer streams as a `data-output-partial` part
 * and ends as a `data-output` one. Keeps which part is open and the elements each answer completed.
 */
export class UiMessageChunks {
  private open: { kind: "text" | "reasoning"; id: string } | undefined;
  private inStep = false;
  private parts = 0;
  /** Per streaming answer (call id): its array elements completed so far, sent with each partial. */
  private readonly answers = new Map<string, OutputPartial["elements"]>();

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
      case "output_partial": {
        const elements = [...(this.answers.get(event.callId) ?? []), ...event.elements];
        this.answers.set(event.callId, elements);
        const data = { callId: event.callId, partial: event.partial, elements };
        return [{ type: "data-output-partial", id: event.callId, data }];
      }
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

  /**
   * The closing chunks of a run that ended with `status` (and its typed answer, `output`), or
   * failed with `error`, or was interrupted.
   */
  finish(outcome: {
    status?: string;
    output?: unknown;
    error?: string;
    interrupted?: boolean;
  }): UiMessageChunk[] {
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
    const answer: UiMessageChunk[] =
      outcome.output === undefined ? [] : [{ type: "data-output", data: outcome.output }];
    return [
      ...closing,
      ...answer,
      { type: "finish", finishReason, messageMetadata: { sessionId: this.sessionId } },
    ];
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
