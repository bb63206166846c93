import {
  type Attributes,
  type Context,
  context,
  createNoopMeter,
  isSpanContextValid,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { UsageRecord, WorkerEvent } from "@podkit/llm-worker";
import type { PolicyDecision } from "@podkit/session-store";
import type { PodEvent } from "../pod/events.js";
import { ChatSpans, recordError } from "./chat-spans.js";
import { ATTR, EVENT, errorTypeOf } from "./gen-ai-attributes.js";
import { systemInstructionsAttribute, textMessageAttribute } from "./gen-ai-messages.js";
import { JobSpans } from "./job-spans.js";
import {
  type GenAiInstruments,
  type PodIdentity,
  type RunSource,
  sessionAttributesOf,
} from "./pod-telemetry.js";

interface OpenTool {
  span: Span;
  started: number;
}

export interface RunTraceInit {
  tracer: Tracer;
  instruments: GenAiInstruments;
  identity: PodIdentity;
  recordContents: boolean;
  trigger: string;
  input: string | undefined;
  source: RunSource;
  /** The context the run's span starts under (a child pod's: its parent's tool call); default the active one. */
  parent?: Context | undefined;
  /** Called once when the run's span ends. */
  onEnd?: () => void;
}

/**
 * The worker events a run's trace records (its own and its `chat` spans'): the only ones the pod
 * hands it. Text and reasoning deltas — most of a run's events — never reach the trace.
 */
export const TRACED_WORKER_EVENTS: ReadonlySet<WorkerEvent["type"]> = new Set<WorkerEvent["type"]>([
  "request_start",
  "retry",
  "continuation",
  "usage",
  "item_committed",
  "request_end",
  "tool_call_dropped",
  "answer_truncated",
  "tool_call_start",
  "tool_call_end",
]);

/** The pod events a run's trace records: the only ones the pod hands it. */
export const TRACED_POD_EVENTS: ReadonlySet<PodEvent["type"]> = new Set<PodEvent["type"]>([
  "turn_start",
  "drift_fork",
  "policy_decision",
  "compaction_start",
  "compaction_failed",
  "compaction_done",
  "run_end",
]);

/** What every histogram of a meter that records nothing is (the API's no-op meter hands out one). */
export const NOOP_HISTOGRAM = createNoopMeter().createHistogram("podkit.noop");

/**
 * The spans of one run, driven by the pod's and the worker's events: `invoke_agent <pod>` for the
 * run, `chat <model>` per model request (retries and stream continuations are its events) and
 * `execute_tool <name>` per tool call, both children of the run's span. Everything open when the
 * run fails ends with the run's error.
 */
export class RunTrace {
  private readonly span: Span;
  private readonly context: Context;
  private readonly started = performance.now();
  private readonly chats: ChatSpans;
  private readonly tools = new Map<string, OpenTool>();
  private readonly totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  private session: { sessionId: string; segmentId: string } | undefined;
  private readonly contents: boolean;
  /** Compactions inside the run, under its span. */
  private readonly jobs: JobSpans;
  /**
   * Nothing of this run can be recorded: no tracer SDK made its span (a no-op span with no valid
   * context: not a sampled-out one) and the histograms are the no-op meter's. The events are then
   * not followed at all (they cost a pod about 2% of a turn's CPU for nothing). An SDK registered
   * while the run goes on is seen from the next run on.
   */
  readonly inert: boolean;

  constructor(private readonly init: RunTraceInit) {
    const { identity, tracer } = init;
    const parent = init.parent ?? context.active();
    this.span = tracer.startSpan(
      `invoke_agent ${identity.agentName}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.operationName]: "invoke_agent",
          [ATTR.providerName]: identity.providerName,
          [ATTR.agentName]: identity.agentName,
          [ATTR.requestModel]: identity.requestModel,
          [ATTR.runTrigger]: init.trigger,
        },
      },
      parent,
    );
    this.context = trace.setSpan(parent, this.span);
    this.inert =
      !this.span.isRecording() &&
      !isSpanContextValid(this.span.spanContext()) &&
      init.instruments.tokenUsage === NOOP_HISTOGRAM &&
      init.instruments.operationDuration === NOOP_HISTOGRAM;
    // Contents are built only when they will be kept: never without opt-in, never for a no-op span.
    this.contents = init.recordContents && this.span.isRecording();
    this.chats = new ChatSpans({
      tracer,
      instruments: init.instruments,
      identity,
      contents: this.contents,
      parent: this.context,
      sessionAttributes: () => this.sessionAttributes(),
      history: () => init.source.history(),
    });
    this.jobs = new JobSpans(
      { tracer, instruments: () => init.instruments, identity, recordContents: init.recordContents },
      {
        context: () => this.context,
        sessionAttributes: () => this.sessionAttributes(),
      },
    );
    if (this.contents && init.input !== undefined) {
      this.span.setAttribute(ATTR.inputMessages, textMessageAttribute("user", init.input));
    }
  }

  /** Runs `fn` with the run's span active, so spans an application or library opens nest under it. */
  within<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  /** The context of tool call `callId`'s open `execute_tool` span, if it is open. */
  toolContext(callId: string): Context | undefined {
    const open = this.tools.get(callId);
    return open === undefined ? undefined : trace.setSpan(this.context, open.span);
  }

  onWorkerEvent(event: WorkerEvent): void {
    if (this.inert) return;
    this.chats.onWorkerEvent(event);
    switch (event.type) {
      case "usage":
        this.addToTotals(event.usage);
        break;
      case "answer_truncated":
        this.span.addEvent(EVENT.answerTruncated, { [ATTR.stopReason]: event.stopReason.kind });
        break;
      case "tool_call_start":
        this.startTool(event);
        break;
      case "tool_call_end":
        this.endTool(event);
        break;
      default:
        break;
    }
  }

  /** A compaction worker's event during this run: its requests are children of the compaction span. */
  onJobWorkerEvent(event: WorkerEvent): void {
    if (this.inert) return;
    this.jobs.onCompactionWorkerEvent(event);
  }

  onPodEvent(event: PodEvent): void {
    if (this.inert) {
      if (event.type === "run_end") this.init.onEnd?.();
      return;
    }
    switch (event.type) {
      case "turn_start":
        this.setSession(this.init.source.session());
        if (this.contents) {
          const prompt = this.init.source.systemPrompt();
          if (prompt !== undefined)
            this.span.setAttribute(ATTR.systemInstructions, systemInstructionsAttribute(prompt));
        }
        break;
      case "drift_fork":
        this.span.addEvent(EVENT.driftFork, {
          "podkit.segment.from": event.fork.fromSegmentId,
          "podkit.segment.to": event.fork.toSegmentId,
        });
        this.setSession(this.init.source.session());
        break;
      case "policy_decision":
        this.span.addEvent(EVENT.policyDecision, policyDecisionAttributes(event.decision));
        break;
      case "compaction_start":
        // A prelude compaction comes before turn_start: its span needs the session too.
        this.setSession(this.init.source.session());
        this.jobs.onPodEvent(event);
        break;
      case "compaction_failed":
        this.jobs.onPodEvent(event);
        break;
      case "compaction_done":
        this.jobs.onPodEvent(event);
        // The run continues in the compacted segment.
        this.setSession(this.init.source.session());
        break;
      case "run_end":
        if (event.error !== undefined || event.result === undefined) this.fail(event.error);
        else this.end(event.result);
        break;
      default:
        break;
    }
  }

  private setSession(session: { sessionId: string; segmentId: string } | undefined): void {
    if (session === undefined) return;
    this.session = session;
    this.span.setAttributes(this.sessionAttributes());
  }

  private sessionAttributes(): Attributes {
    return sessionAttributesOf(this.session);
  }

  private startTool(event: Extract<WorkerEvent, { type: "tool_call_start" }>): void {
    const span = this.init.tracer.startSpan(
      `execute_tool ${event.name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.operationName]: "execute_tool",
          [ATTR.toolName]: event.name,
          [ATTR.toolCallId]: event.callId,
          [ATTR.toolType]: "function",
          ...this.sessionAttributes(),
        },
      },
      this.context,
    );
    if (this.contents) span.setAttribute(ATTR.toolCallArguments, event.arguments);
    this.tools.set(event.callId, { span, started: performance.now() });
  }

  private endTool(event: Extract<WorkerEvent, { type: "tool_call_end" }>): void {
    const open = this.tools.get(event.callId);
    if (open === undefined) return;
    this.tools.delete(event.callId);
    const { span } = open;
    if (this.contents) span.setAttribute(ATTR.toolCallResult, event.summary);
    if (event.isError) {
      // A tool that threw carries its exception. An error result is tool output (it may quote
      // files or command output), so its text is the status message only when contents are on.
      span.setAttribute(ATTR.errorType, event.error === undefined ? "tool_error" : errorTypeOf(event.error));
      if (event.error !== undefined) span.recordException(event.error);
      const message =
        event.error?.message ?? (this.contents ? event.summary : "the tool returned an error result");
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    }
    span.end();
  }

  private addToTotals(usage: UsageRecord): void {
    this.totals.input += usage.inputTokens;
    this.totals.output += usage.outputTokens;
    this.totals.cacheRead += usage.cacheReadTokens;
    this.totals.cacheWrite += usage.cacheWriteTokens;
  }

  private end(result: Extract<PodEvent, { type: "run_end" }>["result"] & object): void {
    this.chats.close(new Error("the run ended while the request was open"));
    const attributes: Attributes = {
      [ATTR.runStatus]: result.status,
      [ATTR.inputTokens]: this.totals.input,
      [ATTR.outputTokens]: this.totals.output,
      [ATTR.cacheReadTokens]: this.totals.cacheRead,
      [ATTR.cacheCreationTokens]: this.totals.cacheWrite,
    };
    const finish =
      result.stopReason === undefined ? undefined : (result.stopReason.raw ?? result.stopReason.kind);
    if (finish !== undefined) attributes[ATTR.responseFinishReasons] = [finish];
    if (this.contents)
      attributes[ATTR.outputMessages] = textMessageAttribute("assistant", result.text, finish);
    this.span.setAttributes(attributes);
    this.finish(undefined);
  }

  private fail(error: unknown): void {
    this.chats.close(error);
    for (const { span } of this.tools.values()) {
      recordError(span, error);
      span.end();
    }
    this.tools.clear();
    this.span.setAttributes({
      [ATTR.inputTokens]: this.totals.input,
      [ATTR.outputTokens]: this.totals.output,
    });
    recordError(this.span, error);
    this.finish(error);
  }

  private finish(error: unknown): void {
    this.span.end();
    this.init.onEnd?.();
    const metric: Attributes = {
      [ATTR.operationName]: "invoke_agent",
      [ATTR.providerName]: this.init.identity.providerName,
      [ATTR.requestModel]: this.init.identity.requestModel,
    };
    if (error !== undefined) metric[ATTR.errorType] = errorTypeOf(error);
    this.init.instruments.operationDuration.record((performance.now() - this.started) / 1000, metric);
  }
}

/** A decision as span event attributes (never the call's arguments: they may hold secrets). */
function policyDecisionAttributes(decision: PolicyDecision): Attributes {
  const attributes: Attributes = {
    "podkit.decision.decided_by": decision.decided_by,
    "podkit.decision.outcome": decision.outcome,
    "podkit.pod.path": decision.pod_path.join(" › "),
  };
  if (decision.call_id !== undefined) attributes[ATTR.toolCallId] = decision.call_id;
  if (decision.tool !== undefined) attributes[ATTR.toolName] = decision.tool;
  if (decision.rule !== undefined) attributes["podkit.decision.rule"] = decision.rule;
  if (decision.reason !== undefined) attributes["podkit.decision.reason"] = decision.reason;
  if (decision.point !== undefined) attributes["podkit.guardrail.point"] = decision.point;
  return attributes;
}
