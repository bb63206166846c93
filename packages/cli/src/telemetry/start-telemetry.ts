import { metrics, trace } from "@opentelemetry/api";
import type { PodTelemetryOptions } from "@podkit/pod";
import { type OtlpConfig, otlpConfigOf, redactEndpoints, SHUTDOWN_GRACE_MS } from "./otlp-config.js";

/** The CLI's telemetry for one command: what to give the pod, and how to end it. */
export interface CliTelemetry {
  /** `PodOptions.telemetry`; undefined when nothing is exported. */
  readonly pod: PodTelemetryOptions | undefined;
  /** Flushes what is pending and unregisters; bounded by the export timeout, never rejects. */
  shutdown(): Promise<void>;
}

const NO_TELEMETRY: CliTelemetry = { pod: undefined, shutdown: async () => {} };

/**
 * Starts OTLP/HTTP export when `OTEL_EXPORTER_OTLP_ENDPOINT` or a signal's own endpoint is set:
 * the official exporter packages are imported only then, a tracer and a meter provider are
 * registered globally and handed to the pod. Exports run in the background with a short timeout
 * and failures are dropped, so a collector that is down never slows or fails a run; exporter
 * packages that cannot be loaded only produce a warning.
 */
export async function startTelemetry(
  env: Readonly<Record<string, string | undefined>>,
  warn: (message: string) => void = () => {},
): Promise<CliTelemetry> {
  const config = otlpConfigOf(env);
  if (config === undefined) return NO_TELEMETRY;
  let providers: Awaited<ReturnType<typeof exportingProviders>>;
  try {
    providers = await exportingProviders(config);
  } catch (error) {
    // Telemetry is never worth a failed run: say why there is none and go on.
    const reason = error instanceof Error ? error.message : String(error);
    warn(`OpenTelemetry export is off: ${redactEndpoints(reason, [config.tracesUrl, config.metricsUrl])}`);
    return NO_TELEMETRY;
  }
  const { tracerProvider, meterProvider } = providers;
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    pod: { tracerProvider, meterProvider, recordContents: config.recordContents },
    shutdown: async () => {
      const flushed = Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, config.timeoutMs + SHUTDOWN_GRACE_MS);
        // The bound itself must not keep the process alive.
        timer.unref?.();
      });
      await Promise.race([flushed, bound]);
      clearTimeout(timer);
      trace.disable();
      metrics.disable();
    },
  };
}

async function exportingProviders(config: OtlpConfig) {
  const [traceExporter, metricExporter, sdkTrace, sdkMetrics, resources] = await Promise.all([
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/exporter-metrics-otlp-http"),
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/sdk-metrics"),
    import("@opentelemetry/resources"),
  ]);
  const resource = resources.resourceFromAttributes({ "service.name": config.serviceName });
  const exporterOptions = { headers: config.headers, timeoutMillis: config.timeoutMs };
  const tracerProvider = new sdkTrace.TracerProvider({
    resource,
    // A signal without an endpoint gets a provider that records nothing anywhere.
    spanProcessors:
      config.tracesUrl === undefined
        ? []
        : [
            new sdkTrace.BatchSpanProcessor({
              exporter: new traceExporter.OTLPTraceExporter({ ...exporterOptions, url: config.tracesUrl }),
              exportTimeoutMillis: config.timeoutMs,
            }),
          ],
  });
  const meterProvider = new sdkMetrics.MeterProvider({
    resource,
    readers:
      config.metricsUrl === undefined
        ? []
        : [
            new sdkMetrics.PeriodicExportingMetricReader({
              exporter: new metricExporter.OTLPMetricExporter({ ...exporterOptions, url: config.metricsUrl }),
              exportTimeoutMillis: config.timeoutMs,
            }),
          ],
  });
  return { tracerProvider, meterProvider };
}
