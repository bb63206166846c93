import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from "@opentelemetry/api";
import type { Item, UsageRecord, WorkerEvent } from "@podkit/llm-worker";
import { ATTR, EVENT, errorTypeOf } from "./gen-ai-attributes.js";
import { messagesAttribute } from "./gen-ai-messages.js";
import type { GenAiInstruments, PodIdentity } from "./pod-telemetry.js";

/** One model request in flight: its `chat` span, across its retries and continuations. */
interface OpenChat {
  span: Span;
  request: number;
  started: number;
  usage: UsageRecord | undefined;
  /** Items the response committed (only collected when contents are recorded). */
  output: Item[];
}

export interface ChatSpansInit {
  tracer: Tracer;
  instruments: GenAiInstruments;
  identity: PodIdentity;
  /** Record input and output messages (the opt-in, and only on a recording span). */
  contents: boolean;
  /** The span the chat spans are children of. */
  parent: Context;
  sessionAttributes(): Attributes;
  /** The history a request sends, for `gen_ai.input.messages`; undefined when not known. */
  history(): readonly Item[] | undefined;
}

/** `ChatSpans.metricAttributes` of each pod (its identity), by response model. */
const METRIC_ATTRIBUTES = new WeakMap<PodIdentity, Map<string | undefined, Attributes>>();

/**
 * The `chat <model>` spans of one worker, driven by its events: one per model request (retries
 * and stream continuations are its events), with usage, finish reason and the GenAI histograms.
 */
export class ChatSpans {
  private chat: OpenChat | undefined;

  constructor(private readonly init: ChatSpansInit) {}

  onWorkerEvent(event: WorkerEvent): void {
    switch (event.type) {
      case "request_start":
        // Later attempts and continuations of the same request stay in its span (as events).
        if (this.chat?.request !== event.request) this.start(event.request);
        break;
      case "retry":
        this.chat?.span.addEvent(EVENT.retry, {
          [ATTR.attempt]: event.attempt,
          [ATTR.retryDelayMs]: event.delayMs,
          [ATTR.errorType]: errorTypeOf(event.error),
          "exception.message": event.error.message,
        });
        break;
      case "continuation":
        this.chat?.span.addEvent(EVENT.continuation, {
          [ATTR.continuation]: event.continuation,
          [ATTR.errorType]: errorTypeOf(event.error),
          "exception.message": event.error.message,
        });
        break;
      case "usage":
        if (this.chat !== undefined) this.chat.usage = event.usage;
        break;
      case "item_committed":
        if (this.init.contents && this.chat !== undefined) this.chat.output.push(event.item);
        break;
      case "request_end":
        this.end(event);
        break;
      case "tool_call_dropped":
        this.chat?.span.addEvent(EVENT.toolCallDropped, {
          [ATTR.toolName]: event.name,
          [ATTR.toolCallId]: event.callId,
        });
        break;
      default:
        break;
    }
  }

  /** Ends the open chat span, if any, with `error` (its worker's run ended while it was open). */
  close(error: unknown): void {
    this.end(undefined, error);
  }

  private start(request: number): void {
    this.end(undefined);
    const { identity, tracer } = this.init;
    const span = tracer.startSpan(
      `chat ${identity.requestModel}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR.operationName]: "chat",
          [ATTR.providerName]: identity.providerName,
          [ATTR.requestModel]: identity.requestModel,
          [ATTR.requestNumber]: request,
          ...identity.requestAttributes,
          ...this.init.sessionAttributes(),
        },
      },
      this.init.parent,
    );
    const history = this.init.contents ? this.init.history() : undefined;
    if (history !== undefined) span.setAttribute(ATTR.inputMessages, messagesAttribute(history));
    this.chat = { span, request, started: performance.now(), usage: undefined, output: [] };
  }

  /** Ends the open chat span: with the response's details, or with the run's error. */
  private end(end: Extract<WorkerEvent, { type: "request_end" }> | undefined, error?: unknown): void {
    const chat = this.chat;
    if (chat === undefined) return;
    this.chat = undefined;
    const { span, usage } = chat;
    let metric: Attributes;
    if (end !== undefined) {
      // One attribute call for everything the response tells (each call checks the span's limits).
      const finish = end.stopReason.raw ?? end.stopReason.kind;
      const attributes: Attributes = usage === undefined ? {} : usageAttributes(usage);
      attributes[ATTR.responseFinishReasons] = [finish];
      attributes[ATTR.stopReason] = end.stopReason.kind;
      if (end.responseModel !== undefined) attributes[ATTR.responseModel] = end.responseModel;
      if (end.responseId !== undefined) attributes[ATTR.responseId] = end.responseId;
      if (this.init.contents) attributes[ATTR.outputMessages] = messagesAttribute(chat.output, finish);
      span.setAttributes(attributes);
      metric = this.metricAttributes(end.responseModel);
    } else {
      if (usage !== undefined) span.setAttributes(usageAttributes(usage));
      recordError(span, error);
      metric = { ...this.metricAttributes(undefined), [ATTR.errorType]: errorTypeOf(error) };
    }
    span.end();
    const { tokenUsage, operationDuration } = this.init.instruments;
    operationDuration.record((performance.now() - chat.started) / 1000, metric);
    if (usage !== undefined) {
      tokenUsage.record(usage.inputTokens, { ...metric, [ATTR.tokenType]: "input" });
      tokenUsage.record(usage.outputTokens, { ...metric, [ATTR.tokenType]: "output" });
    }
  }

  /**
   * The attributes of a chat request's histogram values: operation, provider, model and endpoint,
   * and the response's model when it named one. Built once per pod and response model, frozen.
   */
  private metricAttributes(responseModel: string | undefined): Attributes {
    let byModel = METRIC_ATTRIBUTES.get(this.init.identity);
    if (byModel === undefined) {
      byModel = new Map();
      METRIC_ATTRIBUTES.set(this.init.identity, byModel);
    }
    const cached = byModel.get(responseModel);
    if (cached !== undefined) return cached;
    const metric: Attributes = {
      [ATTR.operationName]: "chat",
      [ATTR.providerName]: this.init.identity.providerName,
      [ATTR.requestModel]: this.init.identity.requestModel,
    };
    const { serverAddress, serverPort } = ATTR;
    for (const key of [serverAddress, serverPort]) {
      const value = this.init.identity.requestAttributes[key];
      if (value !== undefined) metric[key] = value;
    }
    if (responseModel !== undefined) metric[ATTR.responseModel] = responseModel;
    // Shared by every request of the pod (and handed to the SDK): nobody may change it.
    Object.freeze(metric);
    // A provider answering with a new model name per request must not grow this without bound.
    if (byModel.size < 8) byModel.set(responseModel, metric);
    return metric;
  }
}

function usageAttributes(usage: UsageRecord): Attributes {
  const attributes: Attributes = {
    [ATTR.inputTokens]: usage.inputTokens,
    [ATTR.outputTokens]: usage.outputTokens,
    [ATTR.cacheReadTokens]: usage.cacheReadTokens,
    [ATTR.cacheCreationTokens]: usage.cacheWriteTokens,
  };
  if (usage.reasoningTokens !== undefined) attributes[ATTR.reasoningTokens] = usage.reasoningTokens;
  return attributes;
}

/** Error status, `error.type` with the error's class, and the exception as a span event. */
export function recordError(span: Span, error: unknown): void {
  span.setAttribute(ATTR.errorType, errorTypeOf(error));
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
