// Profiling variant of bench/pod-tracing.bench.mjs: runs only traced (or `plain`) pods, many
// 30-turn sessions, so `node --cpu-prof bench/lib/profile-tracing.mjs traced` profiles that side
// alone. Not a bench (prints no BENCH line).
import { rm } from "node:fs/promises";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { Pod } from "../../packages/pod/dist/index.js";
import { toolPackage, workspaceWithManifest } from "./pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./tool-session-double.mjs";

const side = process.argv[2] ?? "traced";
const sessions = Number(process.argv[3] ?? 20);
const spans = new InMemorySpanExporter();
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
const meterProvider = new MeterProvider({
  readers: [
    new PeriodicExportingMetricReader({
      exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
      exportIntervalMillis: 3_600_000,
    }),
  ],
});
const { child, baseUrl } = await startToolSessionDouble("anthropic");
const { root, loaded } = await workspaceWithManifest("podkit-prof-tracing-");
try {
  let cpu = 0;
  for (let s = 0; s < sessions; s++) {
    const pod = await Pod.fromManifest(loaded, {
      model: baseUrl,
      env: { ANTHROPIC_API_KEY: "bench" },
      onWarning: () => {},
      toolPackages: [toolPackage],
      ...(side === "traced" ? { telemetry: { tracerProvider, meterProvider } } : {}),
    });
    const start = process.cpuUsage();
    for (let turn = 0; turn < 30; turn++) await pod.run(`Question number ${turn}?`);
    const used = process.cpuUsage(start);
    cpu += (used.user + used.system) / 1000;
    await pod.close();
    spans.reset();
  }
  console.log(`${side}: ${(cpu / sessions).toFixed(0)} ms CPU per 30-turn session`);
} finally {
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  child.send("stop");
  await rm(root, { recursive: true, force: true });
}
