// The OpenTelemetry SDK's own cost of what a pod records per turn, for bench/pod-tracing: the
// spans and histogram points one traced turn produced, replayed straight into the same SDK with
// nothing of the pod around them. `capture` takes them from a traced turn's export; `replay`
// makes the same SDK calls in their cheapest form (every attribute given at span start, one
// record per data point), so what it costs is a lower bound of what any instrumentation of the
// same spans and points costs with this SDK.
import { context, trace } from "@opentelemetry/api";

/**
 * The spans (from `spans.getFinishedSpans()`) and the histogram points (from a meter reader's
 * `collect()`: how many values per attribute set) of one traced turn, on an SDK that saw nothing
 * else.
 */
export function capture(finishedSpans, resourceMetrics) {
  const root = finishedSpans.find((span) => span.name.startsWith("invoke_agent "));
  if (root === undefined) throw new Error("no invoke_agent span among the turn's spans");
  const spans = finishedSpans
    .filter((span) => span !== root)
    .map((span) => ({ name: span.name, kind: span.kind, attributes: { ...span.attributes } }));
  const points = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of metric.dataPoints) {
        points.push({
          name: metric.descriptor.name,
          attributes: { ...point.attributes },
          count: point.value.count,
        });
      }
    }
  }
  return { root: { name: root.name, kind: root.kind, attributes: { ...root.attributes } }, spans, points };
}

/** A function making `captured`'s SDK calls once: the run's span, its children, the records. */
export function replayer(captured, tracerProvider, meterProvider) {
  const tracer = tracerProvider.getTracer("podkit-floor");
  const meter = meterProvider.getMeter("podkit-floor");
  const histograms = new Map();
  for (const point of captured.points) {
    if (!histograms.has(point.name)) histograms.set(point.name, meter.createHistogram(point.name));
  }
  return () => {
    const run = tracer.startSpan(captured.root.name, {
      kind: captured.root.kind,
      attributes: captured.root.attributes,
    });
    const parent = trace.setSpan(context.active(), run);
    for (const span of captured.spans) {
      tracer.startSpan(span.name, { kind: span.kind, attributes: span.attributes }, parent).end();
    }
    run.end();
    for (const point of captured.points) {
      const histogram = histograms.get(point.name);
      for (let n = 0; n < point.count; n++) histogram.record(1, point.attributes);
    }
  };
}
