import type { Attributes } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterEach } from "vitest";
import type { PodTelemetryOptions } from "../src/telemetry/pod-telemetry.js";

/** A span as the tests compare it: name, kind, status, attributes, events and children. */
export interface SpanNode {
  name: string;
  attributes: Attributes;
  status: { code: number; message?: string };
  events: { name: string; attributes: Attributes }[];
  children: SpanNode[];
}

export interface TelemetryCapture {
  /** Pass as `PodOptions.telemetry` (plus `recordContents` where a test opts in). */
  options: PodTelemetryOptions;
  tracerProvider: TracerProvider;
  meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  /** The finished spans as trees, children in start order. */
  trees(): SpanNode[];
  /** Data points of one histogram, after a collection. */
  histogram(name: string): Promise<DataPoint<Histogram>[]>;
}

/** An SDK tracer provider exporting to memory and a meter provider read on demand, shut down after each test. */
export function useTelemetryCapture(): () => TelemetryCapture {
  const providers: { shutdown(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(providers.splice(0).map((p) => p.shutdown()));
  });
  return () => {
    const exporter = new InMemorySpanExporter();
    // Start times can tie (the clock is coarse); the order spans were started in cannot.
    const startOrder = new Map<string, number>();
    const recordStart: SpanProcessor = {
      onStart: (span) => startOrder.set(span.spanContext().spanId, startOrder.size),
      onEnd: () => {},
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const tracerProvider = new TracerProvider({
      spanProcessors: [recordStart, new SimpleSpanProcessor({ exporter })],
    });
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({
      exporter: metricExporter,
      exportIntervalMillis: 3_600_000,
    });
    const meterProvider = new MeterProvider({ readers: [reader] });
    providers.push(tracerProvider, meterProvider);
    const spans = () => exporter.getFinishedSpans();
    return {
      options: { tracerProvider, meterProvider },
      tracerProvider,
      meterProvider,
      spans,
      trees: () => treesOf(spans(), (span) => startOrder.get(span.spanContext().spanId) ?? -1),
      async histogram(name) {
        await reader.forceFlush();
        const points: DataPoint<Histogram>[] = [];
        for (const batch of metricExporter.getMetrics())
          for (const scope of batch.scopeMetrics)
            for (const metric of scope.metrics)
              if (metric.descriptor.name === name)
                points.push(...(metric.dataPoints as DataPoint<Histogram>[]));
        metricExporter.reset();
        return points;
      },
    };
  };
}

export function treesOf(spans: readonly ReadableSpan[], started: (span: ReadableSpan) => number): SpanNode[] {
  const ordered = [...spans].sort((a, b) => started(a) - started(b));
  const ids = new Set(ordered.map((span) => span.spanContext().spanId));
  const node = (span: ReadableSpan): SpanNode => ({
    name: span.name,
    attributes: span.attributes,
    status: span.status,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes ?? {} })),
    children: ordered
      .filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId)
      .map(node),
  });
  return ordered.filter((span) => !ids.has(span.parentSpanContext?.spanId ?? "")).map(node);
}

/** Every attribute value of every span, as text (to look for contents that must not be there). */
export function allAttributeText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => [span.attributes, span.events.map((event) => event.attributes ?? {})]),
  );
}
