import {
  type Attributes,
  type Context,
  context,
  type Histogram,
  type MeterProvider,
  metrics,
  ProxyTracerProvider,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { Item, WorkerEvent } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { PodEvent } from "../pod/events.js";
import type { ModelOverride } from "../pod/model.js";
import { ATTR, DURATION_BUCKETS, METRIC, providerNameOf, TOKEN_BUCKETS } from "./gen-ai-attributes.js";
import { JobSpans } from "./job-spans.js";
import { NOOP_HISTOGRAM, RunTrace } from "./run-trace.js";

/** How a pod reports to OpenTelemetry (`PodOptions.telemetry`). */
export interface PodTelemetryOptions {
  /** Where spans go; default the global provider (a no-op until the application registers an SDK). */
  readonly tracerProvider?: TracerProvider;
  /** Where the token and duration histograms go; default the global provider. */
  readonly meterProvider?: MeterProvider;
  /**
   * Record prompts, completions, the system prompt, tool arguments and tool results on spans
   * (`gen_ai.input.messages`, …). Off by default: contents may hold secrets and personal data.
   */
  readonly recordContents?: boolean;
}

/** The instrumentation scope of every span and metric a pod emits. */
export const TELEMETRY_SCOPE = "@podkit/pod";

/** What every span of a pod says about it: the agent, the provider and model, the endpoint. */
export interface PodIdentity {
  readonly agentName: string;
  readonly providerName: string;
  readonly requestModel: string;
  /** Request settings and endpoint, recorded on every chat span. */
  readonly requestAttributes: Attributes;
}

/** Where a run's trace reads the pod's live state (session ids, history, system prompt). */
export interface RunSource {
  session(): { sessionId: string; segmentId: string } | undefined;
  history(): readonly Item[];
  systemPrompt(): string | undefined;
}

/** The two GenAI histograms, created once per pod (the SDK shares instruments by name). */
export interface GenAiInstruments {
  tokenUsage: Histogram;
  operationDuration: Histogram;
}

/**
 * A pod's telemetry: one tracer and the GenAI instruments, through `@opentelemetry/api` only, so
 * nothing is recorded unless the application registered an SDK (or passed providers).
 */
export class PodTelemetry {
  private readonly tracer: Tracer;
  /** The instruments and the meter provider they came from. */
  private metered: { provider: MeterProvider; instruments: GenAiInstruments } | undefined;
  /** Compactions outside a run (`pod.compact()`) and background jobs: each a trace of its own. */
  private readonly jobs: JobSpans;
  /** The trace of the run in progress (a compaction inside it is a child of its span). */
  private run: RunTrace | undefined;

  /**
   * `parent` gives the context a run's `invoke_agent` span starts under: a child pod's is the
   * parent's `execute_tool` span of the call that runs it; undefined, the active context.
   */
  constructor(
    private readonly identity: PodIdentity,
    private readonly source: RunSource,
    private readonly options: PodTelemetryOptions = {},
    private readonly parent: () => Context | undefined = () => undefined,
  ) {
    // The global tracer provider is a proxy: an SDK registered after the pod was built still gets its spans.
    this.tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TELEMETRY_SCOPE);
    this.jobs = new JobSpans(
      {
        tracer: this.tracer,
        instruments: () => this.instruments(),
        identity,
        recordContents: options.recordContents === true,
      },
      { context: () => undefined, sessionAttributes: () => sessionAttributesOf(source.session()) },
    );
  }

  /**
   * The GenAI histograms. The global meter provider is no proxy, so it is looked up again at each
   * run: a pod built before the application registered its SDK still reports to it.
   */
  private instruments(): GenAiInstruments {
    const provider = this.options.meterProvider ?? metrics.getMeterProvider();
    if (this.metered?.provider === provider) return this.metered.instruments;
    const meter = provider.getMeter(TELEMETRY_SCOPE);
    const instruments = {
      tokenUsage: meter.createHistogram(METRIC.tokenUsage, {
        description: "Number of input and output tokens used",
        unit: "{token}",
        advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
      }),
      operationDuration: meter.createHistogram(METRIC.operationDuration, {
        description: "GenAI operation duration",
        unit: "s",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }),
    };
    this.metered = { provider, instruments };
    return instruments;
  }

  /** A compaction or background job event from outside a run (inside one, the run's trace has it). */
  onJobEvent(event: PodEvent): void {
    this.jobs.onPodEvent(event);
  }

  /**
   * An event of the compaction worker: its requests become `chat` spans under the compaction's
   * span — the running trace's compaction while a run is in progress, else its own trace.
   */
  onCompactionWorkerEvent(event: WorkerEvent): void {
    if (this.run !== undefined) this.run.onJobWorkerEvent(event);
    else this.jobs.onCompactionWorkerEvent(event);
  }

  /**
   * An event of a background job's own worker (memory's extract and consolidation workers): its
   * requests become `chat` spans under the span of job `job`.
   */
  onJobWorkerEvent(job: string, event: WorkerEvent): void {
    this.jobs.onWorkerEvent(job, event);
  }

  /**
   * The context of tool call `callId`'s open `execute_tool` span in the running trace (a child
   * pod's run starts under it); undefined when no run traces that call.
   */
  toolContext(callId: string): Context | undefined {
    return this.run?.toolContext(callId);
  }

  /**
   * Starts the `invoke_agent` span of one `run()`/`resume()`; the trace ends with its `run_end`.
   * Undefined when nothing of the run can be recorded (see `unrecordable`): there is no trace to
   * follow. An SDK registered while the run goes on is seen from the next run on.
   */
  startRun(run: { trigger: string; input: string | undefined }): RunTrace | undefined {
    const parent = this.parent();
    const instruments = this.instruments();
    if (this.unrecordable(parent, instruments)) {
      this.run = undefined;
      return undefined;
    }
    const trace = new RunTrace({
      source: this.source,
      tracer: this.tracer,
      instruments,
      identity: this.identity,
      recordContents: this.options.recordContents === true,
      parent,
      ...run,
      onEnd: () => {
        if (this.run === trace) this.run = undefined;
      },
    });
    this.run = trace;
    return trace;
  }

  /**
   * True when no span or metric of a run could be recorded, known without starting one: the
   * global tracer provider has no SDK behind it, no span is there to continue (a no-op tracer
   * still hands a parent's context on) and the histograms are the no-op meter's. Starting the
   * run's span to find that out cost a turn more than the rest of its telemetry; anything else
   * (a provider passed in, an SDK that samples the run out) gets a `RunTrace`, inert or not.
   */
  private unrecordable(parent: Context | undefined, instruments: GenAiInstruments): boolean {
    const provider = this.options.tracerProvider ?? trace.getTracerProvider();
    return (
      provider instanceof ProxyTracerProvider &&
      provider.getDelegateTracer(TELEMETRY_SCOPE) === undefined &&
      trace.getSpan(parent ?? context.active()) === undefined &&
      instruments.tokenUsage === NOOP_HISTOGRAM &&
      instruments.operationDuration === NOOP_HISTOGRAM
    );
  }
}

/** `gen_ai.conversation.id` and `podkit.segment.id` of a session (none before it exists). */
export function sessionAttributesOf(
  session: { sessionId: string; segmentId: string } | undefined,
): Attributes {
  if (session === undefined) return {};
  return { [ATTR.conversationId]: session.sessionId, [ATTR.segmentId]: session.segmentId };
}

/** The pod's identity from its manifest and model override (what `Pod` passes in). */
export function podIdentityOf(loaded: LoadedManifest, override: ModelOverride | undefined): PodIdentity {
  const { model, worker, pod } = loaded.manifest;
  const custom = override !== undefined && typeof override !== "string" ? override : undefined;
  const slash = model.ref.indexOf("/");
  const provider = custom?.provider ?? model.ref.slice(0, slash);
  const requestModel = custom?.modelId ?? model.ref.slice(slash + 1);
  const requestAttributes: Attributes = { [ATTR.requestMaxTokens]: worker.max_tokens };
  if (worker.temperature !== undefined) requestAttributes[ATTR.requestTemperature] = worker.temperature;
  if (worker.top_p !== undefined) requestAttributes[ATTR.requestTopP] = worker.top_p;
  const baseUrl = typeof override === "string" ? override : custom === undefined ? model.base_url : undefined;
  if (baseUrl !== undefined) Object.assign(requestAttributes, serverAttributes(baseUrl));
  return { agentName: pod.name, providerName: providerNameOf(provider), requestModel, requestAttributes };
}

function serverAttributes(baseUrl: string): Attributes {
  try {
    const url = new URL(baseUrl);
    const port = url.port === "" ? (url.protocol === "http:" ? 80 : 443) : Number(url.port);
    return { [ATTR.serverAddress]: url.hostname, [ATTR.serverPort]: port };
  } catch {
    return {};
  }
}
