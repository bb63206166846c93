import { describe, expect, it } from "vitest";
import {
  DEFAULT_EXPORT_TIMEOUT_MS,
  otlpConfigOf,
  parseOtlpHeaders,
  redactEndpoints,
} from "../src/telemetry/otlp-config.js";

describe("OTLP export configuration from the standard variables", () => {
  it("exports nothing without an endpoint, or with OTEL_SDK_DISABLED=true", () => {
    expect(otlpConfigOf({})).toBeUndefined();
    expect(otlpConfigOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBeUndefined();
    expect(
      otlpConfigOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBeUndefined();
  });

  it("appends the signal paths to the base endpoint; a signal's own endpoint is used as given", () => {
    expect(otlpConfigOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      metricsUrl: "http://collector:4318/v1/metrics",
      headers: {},
      timeoutMs: DEFAULT_EXPORT_TIMEOUT_MS,
      serviceName: "podkit",
      recordContents: false,
    });
    expect(
      otlpConfigOf({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/api/spans",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://metrics.example/m",
        OTEL_EXPORTER_OTLP_TIMEOUT: "500",
        OTEL_SERVICE_NAME: "reviewer",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "TRUE",
      }),
    ).toMatchObject({
      tracesUrl: "https://traces.example/api/spans",
      metricsUrl: "https://metrics.example/m",
      timeoutMs: 500,
      serviceName: "reviewer",
      recordContents: true,
    });
  });

  it("a signal-specific endpoint is that signal's only: the other signal is off without a base endpoint", () => {
    expect(
      otlpConfigOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/api/spans" }),
    ).toMatchObject({ tracesUrl: "https://traces.example/api/spans", metricsUrl: undefined });
    expect(otlpConfigOf({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://m.example/m" })).toMatchObject({
      tracesUrl: undefined,
      metricsUrl: "https://m.example/m",
    });
    expect(
      otlpConfigOf({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/api/spans",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      }),
    ).toMatchObject({
      tracesUrl: "https://traces.example/api/spans",
      metricsUrl: "http://collector:4318/v1/metrics",
    });
  });

  it("redacts userinfo and query strings of endpoints in messages, parseable or not", () => {
    const raw = "http://bob:pw@exa mple.com/v1/traces?token=abc";
    expect(redactEndpoints(`Could not parse user-provided export URL: '${raw}'`, [raw])).toBe(
      "Could not parse user-provided export URL: 'http://<redacted>@exa mple.com/v1/traces?<redacted>'",
    );
    expect(redactEndpoints("bad https://u:p@h/x?k=v end", [])).toBe(
      "bad https://<redacted>@h/x?<redacted> end",
    );
    expect(redactEndpoints("Could not parse 'not a url'", ["not a url"])).toBe("Could not parse 'not a url'");
  });

  it("reads OTEL_EXPORTER_OTLP_HEADERS as URL-encoded key=value pairs, skipping malformed ones", () => {
    expect(parseOtlpHeaders("api-key=abc%3D%3D, x-team = core ,broken,=nokey,bad=%E0%A4%A")).toEqual({
      "api-key": "abc==",
      "x-team": "core",
    });
  });
});
