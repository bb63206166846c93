import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, type BinResult, runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit run` exports its spans and metrics over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is
// set; a loopback HTTP server stands in for the collector.

interface Received {
  path: string;
  contentType: string | undefined;
  body: string;
}

/** A collector on 127.0.0.1 that records every export; `hang` accepts requests and never answers. */
async function startCollector(mode: "answer" | "hang" = "answer"): Promise<{
  url: string;
  received: Received[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    received.push({
      path: request.url ?? "",
      contentType: request.headers["content-type"],
      body: Buffer.concat(chunks).toString("utf8"),
    });
    if (mode === "answer") response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then released). */
async function closedPortUrl(): Promise<string> {
  const collector = await startCollector();
  const url = collector.url;
  await collector.close();
  return url;
}

let double: ProviderDouble;
const cleanups: (() => Promise<void>)[] = [];
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  cleanups.push(() => double.close());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function workspace() {
  const ws = await doubleWorkspace(double.baseUrl);
  cleanups.push(() => rm(ws.root, { recursive: true, force: true }));
  return ws;
}

/** `podkit run <prompt>` as a user runs it; a run still going after 20 s is killed (code ≠ 0). */
function podkitRun(cwd: string, home: string, extraEnv: Record<string, string>) {
  return runBin(["run", "what is in the repo?"], {
    cwd,
    env: { HOME: home, ANTHROPIC_API_KEY: "test-key", ...extraEnv },
    timeoutMs: 20_000,
  });
}

/**
 * `podkit run <prompt>` killed `shutdownMs` after `answer` reached its stdout (code ≠ 0 when
 * killed). By then only the telemetry shutdown is left, so the bound holds on a busy machine
 * however long starting the CLI and running the turn took (that part is bounded by a 60 s kill).
 */
function podkitRunShutdownWithin(
  cwd: string,
  home: string,
  extraEnv: Record<string, string>,
  answer: string,
  shutdownMs: number,
): Promise<BinResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "run", "what is in the repo?"], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: home, ANTHROPIC_API_KEY: "test-key", ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let shutdownTimer: ReturnType<typeof setTimeout> | undefined;
    const hung = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (shutdownTimer === undefined && stdout.includes(answer)) {
        shutdownTimer = setTimeout(() => child.kill("SIGKILL"), shutdownMs);
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("close", (code) => {
      clearTimeout(hung);
      clearTimeout(shutdownTimer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** Span names in OTLP/JSON export bodies. */
function spanNames(received: readonly Received[]): string[] {
  const names: string[] = [];
  for (const { body } of received.filter((r) => r.path === "/v1/traces")) {
    for (const resource of JSON.parse(body).resourceSpans ?? [])
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? []) names.push(span.name);
  }
  return names.sort();
}

describe("podkit run exports OpenTelemetry over OTLP/HTTP", () => {
  it("delivers the run's spans and metrics to the collector named by OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
    const collector = await startCollector();
    cleanups.push(collector.close);
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "A README and a src folder." }] });
    const result = await podkitRun(cwd, home, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("A README and a src folder.");
    expect(spanNames(collector.received)).toEqual(["chat claude-sonnet-4-5", "invoke_agent tester"]);
    const traces = collector.received.find((r) => r.path === "/v1/traces");
    expect(traces?.contentType).toContain("application/json");
    expect(traces?.body).toContain('"service.name"');
    expect(traces?.body).toContain('"podkit"');
    const metrics = collector.received.filter((r) => r.path === "/v1/metrics").map((r) => r.body);
    expect(metrics.join("")).toContain("gen_ai.client.token.usage");
    expect(metrics.join("")).toContain("gen_ai.client.operation.duration");
    // Contents only on opt-in: the prompt never left the process.
    expect(traces?.body).not.toContain("what is in the repo?");
  });

  it("podkit compact exports the compaction as a trace of its own", async () => {
    const collector = await startCollector();
    cleanups.push(collector.close);
    const { workspace: cwd, home } = await workspace();
    const env = { HOME: home, ANTHROPIC_API_KEY: "test-key", OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    double.enqueue({ parts: [{ type: "text", text: `An answer. ${"detail ".repeat(400)}` }] });
    const first = await runBin(["run", "one"], { cwd, env });
    const sessionId = /session (\S+) ·/.exec(first.stderr)?.[1] as string;
    double.enqueue(
      { parts: [{ type: "tool_call", name: "write_summary", arguments: { summary: "One question." } }] },
      { parts: [{ type: "text", text: "Summary written." }] },
    );
    collector.received.length = 0;
    const compacted = await runBin(["compact", sessionId, "--set", "compaction.retained_tokens=100"], {
      cwd,
      env,
    });
    expect(compacted.code).toBe(0);
    // The compaction worker's two requests are chat spans under the compaction.
    expect(spanNames(collector.received)).toEqual([
      "chat claude-sonnet-4-5",
      "chat claude-sonnet-4-5",
      "compaction tester",
    ]);
  });

  it("an endpoint the exporter cannot use is a warning, never a failed run", async () => {
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "answered anyway" }] });
    const result = await podkitRun(cwd, home, { OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("answered anyway");
    expect(result.stderr).toMatch(/^warning: OpenTelemetry export is off: .*not a url/m);
  });

  it("a traces-only endpoint gets the spans alone: metrics are not posted to the traces URL", async () => {
    const collector = await startCollector();
    cleanups.push(collector.close);
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "done" }] });
    const result = await podkitRun(cwd, home, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/api/spans`,
    });
    expect(result.code).toBe(0);
    expect(collector.received.length).toBeGreaterThan(0);
    for (const { path, body } of collector.received) {
      expect(path).toBe("/api/spans");
      expect(body).toContain("resourceSpans");
      expect(body).not.toContain("resourceMetrics");
    }
  });

  it("the warning for an unusable endpoint never repeats its credentials or query string", async () => {
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "answered anyway" }] });
    const result = await podkitRun(cwd, home, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://alice:s3cret-pass@collector example.com/otlp?api_key=tok-123",
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^warning: OpenTelemetry export is off: .*https:\/\/<redacted>@collector example\.com\/otlp\?<redacted>/m,
    );
    expect(result.stderr).not.toContain("s3cret-pass");
    expect(result.stderr).not.toContain("alice");
    expect(result.stderr).not.toContain("tok-123");
  });

  it("exports nothing when the variable is not set", async () => {
    const collector = await startCollector();
    cleanups.push(collector.close);
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "done" }] });
    const result = await podkitRun(cwd, home, {});
    expect(result.code).toBe(0);
    expect(collector.received).toEqual([]);
  });

  it("sends prompts and completions only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true", async () => {
    const collector = await startCollector();
    cleanups.push(collector.close);
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "A README." }] });
    const result = await podkitRun(cwd, home, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    });
    expect(result.code).toBe(0);
    const traces = collector.received.filter((r) => r.path === "/v1/traces").map((r) => r.body);
    expect(traces.join("")).toContain("what is in the repo?");
  });

  // The OTLP exporters' own default timeout is 10 s per export; the CLI bounds export and shutdown
  // to about 2.5 s, so a run against a dead collector ends well before the kill 9 s after its
  // answer below.
  it.each([
    ["refuses connections", async () => closedPortUrl()],
    [
      "accepts and never answers",
      async () => {
        const collector = await startCollector("hang");
        cleanups.push(collector.close);
        return collector.url;
      },
    ],
  ])("a run whose collector %s still succeeds and exits", async (_label, endpoint) => {
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "still answered" }] });
    const result = await podkitRunShutdownWithin(
      cwd,
      home,
      { OTEL_EXPORTER_OTLP_ENDPOINT: await endpoint() },
      "still answered",
      9_000,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("still answered");
    expect(result.stderr).not.toMatch(/error/i);
  });

  it("positive control: with the export timeout raised past the kill, the same dead collector holds the run up", async () => {
    const collector = await startCollector("hang");
    cleanups.push(collector.close);
    const { workspace: cwd, home } = await workspace();
    double.enqueue({ parts: [{ type: "text", text: "answered, then stuck exporting" }] });
    const result = await podkitRunShutdownWithin(
      cwd,
      home,
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_TIMEOUT: "30000" },
      "answered, then stuck exporting",
      9_000,
    );
    expect(result.stdout).toContain("answered, then stuck exporting");
    expect(result.code).not.toBe(0); // killed 9 s after the answer: the bound above is what lets a run end
  }, 90_000);
});
