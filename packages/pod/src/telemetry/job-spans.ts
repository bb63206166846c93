import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from "@opentelemetry/api";
import type { PodEvent } from "../pod/events.js";
import { ATTR, errorTypeOf } from "./gen-ai-attributes.js";

/** Where a job's span hangs: the run's span for a compaction inside a run, else a new trace. */
export interface JobSpanParent {
  context(): Context | undefined;
  /** `gen_ai.conversation.id` and `podkit.segment.id` of the session now. */
  sessionAttributes(): Attributes;
}

/**
 * Spans of the pod's own LLM jobs, driven by their events: `compaction <pod>` from
 * `compaction_start` to `compaction_done`/`compaction_failed`, and `memory_extract <pod>` /
 * `memory_consolidate <pod>` from a `memory_job` start to its done or failure.
 */
export class JobSpans {
  private compaction: Span | undefined;
  private readonly memory = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer,
    private readonly agentName: string,
    private readonly parent: JobSpanParent,
  ) {}

  onPodEvent(event: PodEvent): void {
    switch (event.type) {
      case "compaction_start":
        this.compaction?.end();
        this.compaction = this.start("compaction", { [ATTR.compactionReason]: event.reason });
        break;
      case "compaction_done":
        this.compaction?.setAttributes({
          [ATTR.compactionFromSegment]: event.fromSegmentId,
          [ATTR.compactionToSegment]: event.toSegmentId,
          [ATTR.compactionTokensBefore]: event.tokensBefore,
          [ATTR.compactionTokensAfter]: event.tokensAfter,
        });
        this.compaction?.end();
        this.compaction = undefined;
        break;
      case "compaction_failed":
        if (this.compaction !== undefined) {
          this.compaction.setAttribute(ATTR.compactionDisabled, event.disabled);
          failed(this.compaction, event.error);
          this.compaction = undefined;
        }
        break;
      case "memory_job": {
        const open = this.memory.get(event.job);
        if (event.status === "start") {
          open?.end();
          this.memory.set(event.job, this.start(`memory_${event.job}`, {}));
          break;
        }
        if (open === undefined) break;
        this.memory.delete(event.job);
        if (event.detail !== undefined) open.setAttribute(ATTR.jobDetail, event.detail);
        if (event.status === "failed")
          failed(open, event.error ?? new Error(event.detail ?? "the job failed"));
        else open.end();
        break;
      }
      default:
        break;
    }
  }

  private start(operation: string, attributes: Attributes): Span {
    return this.tracer.startSpan(
      `${operation} ${this.agentName}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.podkitOperation]: operation,
          [ATTR.agentName]: this.agentName,
          ...this.parent.sessionAttributes(),
          ...attributes,
        },
      },
      this.parent.context(),
    );
  }
}

function failed(span: Span, error: unknown): void {
  span.setAttribute(ATTR.errorType, errorTypeOf(error));
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}
