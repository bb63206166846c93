// What the standard OTLP environment variables ask for, read from the CLI's `io.env` (never
// `process.env` directly, so tests can point the CLI at a loopback collector).

/** Export attempts give up after this long unless `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 2_000;

/** The CLI waits this much beyond the export timeout for the last flush before it moves on. */
export const SHUTDOWN_GRACE_MS = 500;

export interface OtlpConfig {
  /** Undefined when only metrics have an endpoint: traces are not exported. */
  tracesUrl: string | undefined;
  /** Undefined when only traces have an endpoint: metrics are not exported. */
  metricsUrl: string | undefined;
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
 * or `OTEL_SDK_DISABLED=true`. Per the OTLP exporter specification a signal-specific endpoint
 * belongs to its signal only: a signal without its own endpoint and without
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is not exported (never sent to the other signal's URL).
 */
export function otlpConfigOf(env: Env): OtlpConfig | undefined {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return undefined;
  const tracesUrl = signalUrl(env, "traces");
  const metricsUrl = signalUrl(env, "metrics");
  if (tracesUrl === undefined && metricsUrl === undefined) return undefined;
  const timeout = Number(set(env.OTEL_EXPORTER_OTLP_TIMEOUT));
  return {
    tracesUrl,
    metricsUrl,
    headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_EXPORT_TIMEOUT_MS,
    serviceName: set(env.OTEL_SERVICE_NAME) ?? "podkit",
    recordContents: set(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)?.toLowerCase() === "true",
  };
}

/**
 * `text` with every endpoint's userinfo and query string blanked: endpoints may carry
 * credentials (`https://user:token@host/?api_key=…`) that must not reach a terminal or a log,
 * even when the URL is too malformed to parse (so this works on the text, not on `URL`).
 */
export function redactEndpoints(text: string, endpoints: readonly (string | undefined)[]): string {
  let redacted = text;
  for (const endpoint of endpoints) {
    if (endpoint !== undefined && endpoint !== "")
      redacted = redacted.split(endpoint).join(redactEndpoint(endpoint));
  }
  // URLs the message spells differently from the variable (normalized, say).
  return redacted
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#'"]*@/gi, "$1<redacted>@")
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s?'"]*)\?[^\s'"]*/gi, "$1?<redacted>");
}

/** One endpoint as written: everything between `scheme://` and the last `@` of the authority, and after `?`. */
function redactEndpoint(endpoint: string): string {
  const withoutUser = endpoint.replace(/^([^:/?#]+:\/\/)[^/?#]*@/, "$1<redacted>@");
  const query = withoutUser.indexOf("?");
  return query === -1 ? withoutUser : `${withoutUser.slice(0, query)}?<redacted>`;
}
