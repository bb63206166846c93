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
// per-round ratios, with their spread, over 21 rounds (one round's ratio spreads 0.9–1.35 and the
// median of 11 moved 1.01–1.08 between runs, as pod.overhead's does). Aim ≤ 1.03×.
//
// pod.tracing.sdk_floor.ratio: what the SDK alone costs a turn. The spans and histogram points of
// one traced turn (captured from a pod on an SDK of its own) are replayed straight into the same
// SDK after each turn of an untraced pod, in their cheapest form (every attribute given at span
// start, bench/lib/otel-floor.mjs), and 1 + replay CPU / turn CPU is reported per round (median of
// 9, with the spread): the ratio a pod whose instrumentation cost nothing beyond the SDK calls
// themselves would reach. pod.tracing.ratio minus this is the pod's own share.
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
import { capture, replayer } from "./lib/otel-floor.mjs";
import { toolPackage, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const TURNS = 30;
const ROUNDS = 21;
const CONTEXT_ROUNDS = 7;
const FLOOR_ROUNDS = 9;

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
  return { spans, tracerProvider, meterProvider, reader };
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

/** What one traced turn records, taken from a pod's second turn on an SDK of its own. */
async function captureTurn(loaded, baseUrl) {
  const fresh = inMemorySdk();
  const pod = await openPod(loaded, baseUrl, {
    tracerProvider: fresh.tracerProvider,
    meterProvider: fresh.meterProvider,
  });
  await runTurn(pod, 0);
  fresh.spans.reset();
  await fresh.reader.collect(); // cumulative: keep the first turn's points out by difference
  const before = await fresh.reader.collect();
  await runTurn(pod, 1);
  const after = await fresh.reader.collect();
  await pod.close();
  const captured = capture(fresh.spans.getFinishedSpans(), after.resourceMetrics);
  const counted = capture(fresh.spans.getFinishedSpans(), before.resourceMetrics).points;
  for (const point of captured.points) {
    const earlier = counted.find(
      (p) => p.name === point.name && JSON.stringify(p.attributes) === JSON.stringify(point.attributes),
    );
    point.count -= earlier?.count ?? 0;
  }
  await fresh.tracerProvider.shutdown();
  await fresh.meterProvider.shutdown();
  return captured;
}

/**
 * One floor round: an untraced pod's turns, each followed by the SDK calls of a traced turn made
 * directly (`replay`); the CPU of each.
 */
async function floorRound(loaded, baseUrl, replay) {
  const pod = await openPod(loaded, baseUrl, undefined);
  globalThis.gc?.();
  const cpu = { turns: 0, sdk: 0 };
  for (let turn = 0; turn < TURNS; turn++) {
    let start = process.cpuUsage();
    await runTurn(pod, turn);
    let used = process.cpuUsage(start);
    cpu.turns += (used.user + used.system) / 1000;
    start = process.cpuUsage();
    replay();
    used = process.cpuUsage(start);
    cpu.sdk += (used.user + used.system) / 1000;
  }
  await pod.close();
  return cpu;
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
  // The SDK's own cost of a traced turn's spans and points, with nothing of the pod around them.
  const captured = await captureTurn(loaded, baseUrl);
  const replay = replayer(captured, sdk.tracerProvider, sdk.meterProvider);
  const floors = [];
  for (let round = 0; round < FLOOR_ROUNDS; round++) {
    const cpu = await floorRound(loaded, baseUrl, replay);
    floors.push(1 + cpu.sdk / cpu.turns);
  }
  sdk.spans.reset();
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
    `BENCH pod.tracing.sdk_floor.ratio ${median(floors).toFixed(3)} x (spread ${Math.min(...floors).toFixed(3)}–${Math.max(...floors).toFixed(3)}, ${FLOOR_ROUNDS} rounds; ${captured.spans.length + 1} spans and ${captured.points.reduce((n, p) => n + p.count, 0)} histogram values per turn)`,
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
