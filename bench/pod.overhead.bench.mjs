// CPU cost of the Pod over a bare Worker, and of Pod.restore over the session store's restore.
//
// pod.overhead.ratio: the same scripted 30-turn tool session (each turn a tool call, then an
// answer) through `Pod` (system prompt rendered once, every item, usage and turn persisted to a
// real FsStore log, events) and through a bare `Worker` with the same tool and system prompt and
// no persistence. The provider double runs in a child process, so `process.cpuUsage()` measures
// the client side only. Each round opens a pod and a worker (not counted: `pod.startup_cpu` gives
// the pod's opening and closing on its own) and runs their turns in turn — the two alternating
// turn by turn, who goes first alternating too — summing each side's CPU over its 30 turns, so a
// change of load from other processes hits both sides alike. Aim ≤ 1.1×. 21 rounds (BENCH_ROUNDS):
// one round's ratio spreads about ±15 % even on a quiet machine, mostly because V8 re-optimizes
// about a hundred functions of the shared HTTP stack every round (`--trace-opt`: the optimized code
// that embedded the previous round's objects is dropped when they are collected), some 0.25 s of
// compiler-thread CPU a round that lands on whichever side's turn is running; the median of 9
// rounds moved by ±0.05 from run to run, too much to tell a 0.02 change.
//
// pod.restore.ratio: `Pod.restore` of a 10,000-entry session (catalog layers, tool packages,
// replay, worker) vs `restoreSession` of the same session alone. Aim ≤ 1.3×.
import { rm } from "node:fs/promises";
import { createModelAdapter, ToolServer, Worker } from "../packages/llm-worker/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import { FsStore, restoreSession, sessionsRoot } from "../packages/session-store/dist/index.js";
import { knob } from "./lib/knobs.mjs";
import { bigSession, lookup, REF, toolPackage, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const TURNS = 30;
const ROUNDS = knob("ROUNDS", 21);
const RESTORE_ROUNDS = 9;
const RESTORE_ENTRIES = 10_000;

const podOptions = (baseUrl) => ({
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "bench" },
  onWarning: () => {},
  toolPackages: [toolPackage],
});

function openPod(loaded, baseUrl) {
  return Pod.fromManifest(loaded, podOptions(baseUrl));
}

function openWorker(systemPrompt, baseUrl) {
  const tools = new ToolServer();
  tools.registerTool(lookup);
  return new Worker({
    model: createModelAdapter(REF, { apiKey: "bench", baseUrl }),
    systemPrompt,
    tools,
  });
}

/** One turn of either side, checked; its CPU in ms. */
async function turnCpu(runner, turn) {
  const start = process.cpuUsage();
  const result = await runner.run(`Question number ${turn}?`);
  const used = process.cpuUsage(start);
  if (result.status !== "finished" || result.requests !== 2)
    throw new Error(`unexpected ${JSON.stringify(result)}`);
  return (used.user + used.system) / 1000;
}

/** One round: a pod and a worker, turn by turn; the CPU of each side's turns. */
async function interleavedRound(loaded, prompt, baseUrl, round) {
  const pod = await openPod(loaded, baseUrl);
  const worker = openWorker(prompt, baseUrl);
  globalThis.gc?.();
  const cpu = { pod: 0, worker: 0 };
  for (let turn = 0; turn < TURNS; turn++) {
    if ((turn + round) % 2 === 0) {
      cpu.pod += await turnCpu(pod, turn);
      cpu.worker += await turnCpu(worker, turn);
    } else {
      cpu.worker += await turnCpu(worker, turn);
      cpu.pod += await turnCpu(pod, turn);
    }
  }
  await pod.close();
  return cpu;
}

async function viaPod(loaded, baseUrl) {
  const pod = await Pod.fromManifest(loaded, podOptions(baseUrl));
  for (let turn = 0; turn < TURNS; turn++) {
    const result = await pod.run(`Question number ${turn}?`);
    if (result.status !== "finished" || result.requests !== 2)
      throw new Error(`unexpected ${JSON.stringify(result)}`);
  }
  const prompt = pod.systemPrompt;
  await pod.close();
  return prompt;
}

async function viaWorker(systemPrompt, baseUrl) {
  const tools = new ToolServer();
  tools.registerTool(lookup);
  const worker = new Worker({
    model: createModelAdapter(REF, { apiKey: "bench", baseUrl }),
    systemPrompt,
    tools,
  });
  for (let turn = 0; turn < TURNS; turn++) {
    const result = await worker.run(`Question number ${turn}?`);
    if (result.status !== "finished" || result.requests !== 2)
      throw new Error(`unexpected ${JSON.stringify(result)}`);
  }
}

async function measure(fn) {
  globalThis.gc?.();
  const cpu = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

async function overhead() {
  const { child, baseUrl } = await startToolSessionDouble("anthropic");
  const { root, loaded } = await workspaceWithManifest("podkit-bench-pod-");
  try {
    const prompt = await viaPod(loaded, baseUrl); // warm-up both paths
    await viaWorker(prompt, baseUrl);
    await interleavedRound(loaded, prompt, baseUrl, 0);
    const pod = [];
    const worker = [];
    for (let round = 0; round < ROUNDS; round++) {
      const cpu = await interleavedRound(loaded, prompt, baseUrl, round);
      pod.push(cpu.pod);
      worker.push(cpu.worker);
    }
    const startup = [];
    for (let round = 0; round < ROUNDS; round++) {
      startup.push(await measure(async () => (await openPod(loaded, baseUrl)).close()));
    }
    const ratios = pod.map((time, round) => time / worker[round]);
    console.log(
      `BENCH pod.overhead.ratio ${median(ratios).toFixed(2)} x (spread ${spread(ratios)}, ${ROUNDS} rounds)`,
    );
    console.log(`BENCH pod.overhead.pod_session_cpu ${median(pod).toFixed(0)} ms`);
    console.log(`BENCH pod.overhead.worker_session_cpu ${median(worker).toFixed(0)} ms`);
    console.log(`BENCH pod.overhead.startup_cpu ${median(startup).toFixed(1)} ms`);
  } finally {
    child.send("stop");
    await new Promise((resolve) => child.once("exit", resolve));
    await rm(root, { recursive: true, force: true });
  }
}

async function restore() {
  const { root, loaded } = await workspaceWithManifest("podkit-bench-pod-");
  const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
  try {
    const sessionId = await bigSession(store, RESTORE_ENTRIES);
    const options = { ...podOptions("http://127.0.0.1:9/v1"), store };
    const viaPodRestore = async () => {
      const pod = await Pod.restore(loaded, sessionId, options);
      const restored = pod.history.length;
      // Closed as its user would: a pod left open keeps its history and tools on the heap.
      await pod.close();
      return restored;
    };
    const viaStore = async () => (await restoreSession(store, sessionId)).history.length;
    await viaPodRestore();
    await viaStore();
    const pod = [];
    const bare = [];
    for (let round = 0; round < RESTORE_ROUNDS; round++) {
      const sides = [
        async () => bare.push(await measure(viaStore)),
        async () => pod.push(await measure(viaPodRestore)),
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    const ratios = pod.map((time, round) => time / bare[round]);
    console.log(
      `BENCH pod.restore.ratio ${median(ratios).toFixed(2)} x (spread ${spread(ratios)}, ${RESTORE_ROUNDS} rounds)`,
    );
    console.log(`BENCH pod.restore.pod_ms ${median(pod).toFixed(1)} ms`);
    console.log(`BENCH pod.restore.store_ms ${median(bare).toFixed(1)} ms`);
  } finally {
    await store.close();
    await rm(root, { recursive: true, force: true });
  }
}

await overhead();
await restore();
