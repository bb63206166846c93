// CPU cost of a pod's OpenTelemetry instrumentation.
//
// pod.tracing.ratio: the scripted 30-turn tool session (each turn a tool call, then an answer;
// the provider double in a child process, so `process.cpuUsage()` measures the client side only)
// through `Pod` with an SDK recording every span and metric in memory (a tracer provider with a
// simple processor and an in-memory exporter, a meter provider) vs the same session with no SDK
// registered (the API's no-op). The median of the per-round ratios (rounds interleaved, the order
// alternating, so load from other processes and clean-up of the previous pod hit both sides alike).
// Aim ≤ 1.05×.
//
// pod.tracing.context_manager.ratio: the same, with the AsyncLocalStorage context manager that an
// application's SDK setup registers as well (medians; measured after the others). On Node 20 AsyncLocalStorage runs on async_hooks and
// taxes every promise of the process, podkit's or not; Node 22+ makes it cheap.
import { rm } from "node:fs/promises";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { Pod } from "../packages/pod/dist/index.js";
import { toolPackage, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const TURNS = 30;
const ROUNDS = 15;
const CONTEXT_ROUNDS = 7;

/** An in-memory SDK: every span exported, every histogram aggregated. */
function inMemorySdk() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
  });
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return { spans, tracerProvider, meterProvider };
}

async function session(loaded, baseUrl, telemetry) {
  const pod = await Pod.fromManifest(loaded, {
    model: baseUrl,
    env: { ANTHROPIC_API_KEY: "bench" },
    onWarning: () => {},
    toolPackages: [toolPackage],
    ...(telemetry === undefined ? {} : { telemetry }),
  });
  for (let turn = 0; turn < TURNS; turn++) {
    const result = await pod.run(`Question number ${turn}?`);
    if (result.status !== "finished" || result.requests !== 2)
      throw new Error(`unexpected ${JSON.stringify(result)}`);
  }
  await pod.close();
}

async function traced(loaded, baseUrl, sdk, withContextManager) {
  if (withContextManager) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    await session(loaded, baseUrl, { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider });
  } finally {
    context.disable();
  }
  // Four spans per turn: the run, two requests, one tool call.
  const exported = sdk.spans.getFinishedSpans().length;
  if (exported !== TURNS * 4) throw new Error(`expected ${TURNS * 4} spans, got ${exported}`);
  sdk.spans.reset();
}

async function measure(fn) {
  globalThis.gc?.();
  const cpu = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const { child, baseUrl } = await startToolSessionDouble("anthropic");
const { root, loaded } = await workspaceWithManifest("podkit-bench-tracing-");
const sdk = inMemorySdk();
try {
  await session(loaded, baseUrl, undefined); // warm-up both paths
  await traced(loaded, baseUrl, sdk, false);
  const plain = [];
  const withSdk = [];
  // The order alternates: whichever side runs first in a round pays for the previous pod's clean-up.
  for (let round = 0; round < ROUNDS; round++) {
    const measurePlain = async () => plain.push(await measure(() => session(loaded, baseUrl, undefined)));
    const measureSdk = async () => withSdk.push(await measure(() => traced(loaded, baseUrl, sdk, false)));
    if (round % 2 === 0) {
      await measurePlain();
      await measureSdk();
    } else {
      await measureSdk();
      await measurePlain();
    }
  }
  // Last: once enabled, AsyncLocalStorage's hooks would tax the untraced rounds too.
  const withContext = [];
  for (let round = 0; round < CONTEXT_ROUNDS; round++) {
    withContext.push(await measure(() => traced(loaded, baseUrl, sdk, true)));
  }
  const paired = median(withSdk.map((time, round) => time / plain[round]));
  const ratios = withSdk.map((time, round) => time / plain[round]);
  console.log(
    `BENCH pod.tracing.ratio ${paired.toFixed(2)} x (spread ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}, ${ROUNDS} rounds)`,
  );
  console.log(
    `BENCH pod.tracing.context_manager.ratio ${(median(withContext) / median(plain)).toFixed(2)} x`,
  );
  console.log(`BENCH pod.tracing.traced_session_cpu ${median(withSdk).toFixed(0)} ms`);
  console.log(`BENCH pod.tracing.untraced_session_cpu ${median(plain).toFixed(0)} ms`);
} finally {
  await sdk.tracerProvider.shutdown();
  await sdk.meterProvider.shutdown();
  child.send("stop");
  await new Promise((resolve) => child.once("exit", resolve));
  await rm(root, { recursive: true, force: true });
}
