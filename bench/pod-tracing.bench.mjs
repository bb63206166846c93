// CPU cost of a pod's OpenTelemetry instrumentation.
//
// pod.tracing.ratio: the scripted 30-turn tool session (each turn a tool call, then an answer;
// the provider double in a child process, so `process.cpuUsage()` measures the client side only)
// through `Pod` with an SDK recording every span and metric in memory (a tracer provider with a
// simple processor and an in-memory exporter, a meter provider) vs the same session with no SDK
// registered (the API's no-op). Each round opens one pod of each kind and runs their turns in
// turn — the two sides alternate turn by turn, who goes first alternating too — summing each
// side's CPU over its turns, so a change of load from other processes (a two-core machine shared
// with other jobs) hits both sides alike instead of one whole session. The median of the
// per-round ratios, with their spread. Aim ≤ 1.03×.
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
const ROUNDS = 11;
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

function openPod(loaded, baseUrl, telemetry) {
  return Pod.fromManifest(loaded, {
    model: baseUrl,
    env: { ANTHROPIC_API_KEY: "bench" },
    onWarning: () => {},
    toolPackages: [toolPackage],
    ...(telemetry === undefined ? {} : { telemetry }),
  });
}

async function runTurn(pod, turn) {
  const result = await pod.run(`Question number ${turn}?`);
  if (result.status !== "finished" || result.requests !== 2)
    throw new Error(`unexpected ${JSON.stringify(result)}`);
}

/** One round: an untraced and a traced pod, turn by turn; the CPU of each side's turns. */
async function interleavedRound(loaded, baseUrl, sdk, round) {
  const plainPod = await openPod(loaded, baseUrl, undefined);
  const tracedPod = await openPod(loaded, baseUrl, {
    tracerProvider: sdk.tracerProvider,
    meterProvider: sdk.meterProvider,
  });
  globalThis.gc?.();
  const cpu = { plain: 0, traced: 0 };
  const turnOf = async (side, pod, turn) => {
    const start = process.cpuUsage();
    await runTurn(pod, turn);
    const used = process.cpuUsage(start);
    cpu[side] += (used.user + used.system) / 1000;
  };
  for (let turn = 0; turn < TURNS; turn++) {
    if ((turn + round) % 2 === 0) {
      await turnOf("plain", plainPod, turn);
      await turnOf("traced", tracedPod, turn);
    } else {
      await turnOf("traced", tracedPod, turn);
      await turnOf("plain", plainPod, turn);
    }
  }
  await plainPod.close();
  await tracedPod.close();
  const exported = sdk.spans.getFinishedSpans().length;
  if (exported !== TURNS * 4) throw new Error(`expected ${TURNS * 4} spans, got ${exported}`);
  sdk.spans.reset();
  return cpu;
}

/** A traced session with the AsyncLocalStorage context manager; the CPU of its turns. */
async function contextSession(loaded, baseUrl, sdk) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  let used;
  try {
    const pod = await openPod(loaded, baseUrl, {
      tracerProvider: sdk.tracerProvider,
      meterProvider: sdk.meterProvider,
    });
    globalThis.gc?.();
    const start = process.cpuUsage();
    for (let turn = 0; turn < TURNS; turn++) await runTurn(pod, turn);
    used = process.cpuUsage(start);
    await pod.close();
  } finally {
    context.disable();
  }
  // Four spans per turn: the run, two requests, one tool call.
  const exported = sdk.spans.getFinishedSpans().length;
  if (exported !== TURNS * 4) throw new Error(`expected ${TURNS * 4} spans, got ${exported}`);
  sdk.spans.reset();
  return (used.user + used.system) / 1000;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const { child, baseUrl } = await startToolSessionDouble("anthropic");
const { root, loaded } = await workspaceWithManifest("podkit-bench-tracing-");
const sdk = inMemorySdk();
try {
  await interleavedRound(loaded, baseUrl, sdk, 0); // warm-up both paths
  const plain = [];
  const withSdk = [];
  for (let round = 0; round < ROUNDS; round++) {
    const cpu = await interleavedRound(loaded, baseUrl, sdk, round);
    plain.push(cpu.plain);
    withSdk.push(cpu.traced);
  }
  // Last: once enabled, AsyncLocalStorage's hooks would tax the untraced rounds too.
  const withContext = [];
  for (let round = 0; round < CONTEXT_ROUNDS; round++) {
    withContext.push(await contextSession(loaded, baseUrl, sdk));
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
