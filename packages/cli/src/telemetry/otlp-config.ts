// What the standard OTLP environment variables ask for, read from the CLI's `io.env` (never
// `process.env` directly, so tests can point the CLI at a loopback collector).

/** Export attempts give up after this long unless `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 2_000;

/** The CLI waits this much beyond the export timeout for the last flush before it moves on. */
export const SHUTDOWN_GRACE_MS = 500;

export interface OtlpConfig {
  tracesUrl: string;
  metricsUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: record prompts and completions. */
  recordContents: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim();

/** The signal's URL: its own variable as given, else the base endpoint plus `/v1/<signal>`. */
function signalUrl(env: Env, signal: "traces" | "metrics"): string | undefined {
  const own = set(env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`]);
  if (own !== undefined) return own;
  const base = set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  return base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/** `key1=value1,key2=value2`, values URL-encoded (the OTLP exporter specification's format). */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A malformed escape: the header is skipped rather than breaking the run.
    }
  }
  return headers;
}

/**
 * The export configuration, or undefined when nothing asks for export: no OTLP endpoint is set,
 * or `OTEL_SDK_DISABLED=true`.
 */
export function otlpConfigOf(env: Env): OtlpConfig | undefined {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return undefined;
  const tracesUrl = signalUrl(env, "traces");
  if (tracesUrl === undefined) return undefined;
  const timeout = Number(set(env.OTEL_EXPORTER_OTLP_TIMEOUT));
  return {
    tracesUrl,
    metricsUrl: signalUrl(env, "metrics") ?? tracesUrl.replace(/\/v1\/traces$/, "/v1/metrics"),
    headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_EXPORT_TIMEOUT_MS,
    serviceName: set(env.OTEL_SERVICE_NAME) ?? "podkit",
    recordContents: set(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)?.toLowerCase() === "true",
  };
}
