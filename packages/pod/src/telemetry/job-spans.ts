import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { WorkerEvent } from "@podkit/llm-worker";
import type { PodEvent } from "../pod/events.js";
import { ChatSpans } from "./chat-spans.js";
import { ATTR, errorTypeOf } from "./gen-ai-attributes.js";
import type { GenAiInstruments, PodIdentity } from "./pod-telemetry.js";

/** Where a job's span hangs: the run's span for a compaction inside a run, else a new trace. */
export interface JobSpanParent {
  context(): Context | undefined;
  /** `gen_ai.conversation.id` and `podkit.segment.id` of the session now. */
  sessionAttributes(): Attributes;
}

/** What job spans (and the `chat` spans of a job's own worker) are recorded with. */
export interface JobSpansInit {
  tracer: Tracer;
  /** Looked up when a job's worker makes a request (the global meter provider is no proxy). */
  instruments(): GenAiInstruments;
  identity: PodIdentity;
  recordContents: boolean;
}

/** An open job span and the `chat` spans of its worker's requests. */
interface OpenJob {
  span: Span;
  chats: ChatSpans | undefined;
}

/**
 * Spans of the pod's own LLM jobs, driven by their events: `compaction <pod>` from
 * `compaction_start` to `compaction_done`/`compaction_failed`, and `<job> <pod>` for a background
 * job from its `job_progress` start to its done or failure (memory's are `memory_extract` and
 * `memory_consolidate`). The requests of a job's own worker are `chat <model>` children of its span.
 */
export class JobSpans {
  private compaction: OpenJob | undefined;
  private readonly jobs = new Map<string, OpenJob>();

  constructor(
    private readonly init: JobSpansInit,
    private readonly parent: JobSpanParent,
  ) {}

  /** A worker event of the compaction worker; dropped when no compaction is open. */
  onCompactionWorkerEvent(event: WorkerEvent): void {
    if (this.compaction !== undefined) this.chatsOf(this.compaction).onWorkerEvent(event);
  }

  /** A worker event of background job `job`'s own worker; dropped when that job has no open span. */
  onWorkerEvent(job: string, event: WorkerEvent): void {
    const open = this.jobs.get(job);
    if (open !== undefined) this.chatsOf(open).onWorkerEvent(event);
  }

  private chatsOf(open: OpenJob): ChatSpans {
    open.chats ??= new ChatSpans({
      tracer: this.init.tracer,
      instruments: this.init.instruments(),
      identity: this.init.identity,
      contents: this.init.recordContents && open.span.isRecording(),
      parent: trace.setSpan(this.parent.context() ?? context.active(), open.span),
      sessionAttributes: () => this.parent.sessionAttributes(),
      // The job worker's history is its own and not in view here: no input messages.
      history: () => undefined,
    });
    return open.chats;
  }

  onPodEvent(event: PodEvent): void {
    switch (event.type) {
      case "compaction_start":
        if (this.compaction !== undefined) ended(this.compaction);
        this.compaction = this.start("compaction", { [ATTR.compactionReason]: event.reason });
        break;
      case "compaction_done":
        this.compaction?.span.setAttributes({
          [ATTR.compactionFromSegment]: event.fromSegmentId,
          [ATTR.compactionToSegment]: event.toSegmentId,
          [ATTR.compactionTokensBefore]: event.tokensBefore,
          [ATTR.compactionTokensAfter]: event.tokensAfter,
        });
        if (this.compaction !== undefined) ended(this.compaction);
        this.compaction = undefined;
        break;
      case "compaction_failed":
        if (this.compaction !== undefined) {
          this.compaction.span.setAttribute(ATTR.compactionDisabled, event.disabled);
          failed(this.compaction, event.error);
          this.compaction = undefined;
        }
        break;
      case "job_progress": {
        const open = this.jobs.get(event.job);
        if (event.status === "start") {
          if (open !== undefined) ended(open);
          this.jobs.set(event.job, this.start(event.job, {}));
          break;
        }
        if (open === undefined) break;
        this.jobs.delete(event.job);
        if (event.detail !== undefined) open.span.setAttribute(ATTR.jobDetail, event.detail);
        if (event.status === "failed")
          failed(open, event.error ?? new Error(event.detail ?? "the job failed"));
        else ended(open);
        break;
      }
      default:
        break;
    }
  }

  private start(operation: string, attributes: Attributes): OpenJob {
    const { agentName } = this.init.identity;
    const span = this.init.tracer.startSpan(
      `${operation} ${agentName}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.podkitOperation]: operation,
          [ATTR.agentName]: agentName,
          ...this.parent.sessionAttributes(),
          ...attributes,
        },
      },
      this.parent.context(),
    );
    return { span, chats: undefined };
  }
}

function ended({ span, chats }: OpenJob): void {
  chats?.close(new Error("the job ended while its request was open"));
  span.end();
}

function failed({ span, chats }: OpenJob, error: unknown): void {
  chats?.close(error);
  span.setAttribute(ATTR.errorType, errorTypeOf(error));
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}
