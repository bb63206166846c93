// How the cost of memory's after-turn job grows with the session. Requires a built workspace.
//   BENCH memory.after_turn.growth            CPU of the job's passes over the last 100 turns of a
//                                             1,000-turn session ÷ over the first 100, with the
//                                             context a pod gives (its incremental `readFrom`). Aim ≤ 1.2.
//   BENCH memory.after_turn.growth.whole_read the same without `readFrom` (the pod before issue 24:
//                                             each pass read the head segment whole and skipped)
//   BENCH memory.after_turn.pass_cpu_last100  mean CPU of a pass over the last 100 turns (ms), both sides
// The job is the one `attachMemory` registers, run after every turn as the pod runs it; an extract
// happens every few turns (extract_threshold) against the provider double in a child process, so
// only the client side is measured. Median of 5 rounds, the sides alternating which runs first.
import { rm } from "node:fs/promises";
import { createModelAdapter } from "../packages/llm-worker/dist/index.js";
import { attachMemory } from "../packages/memory/dist/index.js";
import { loadPodResources } from "../packages/pod/dist/index.js";
import { FsStore, SessionLog, sessionsRoot } from "../packages/session-store/dist/index.js";
import { knob } from "./lib/knobs.mjs";
import { REF, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";
import { makeEntries } from "./lib/turn-entries.mjs";

const TURNS = knob("TURNS", 500);
const WINDOW = 100;
const ROUNDS = knob("ROUNDS", 5);
const ENTRIES_PER_TURN = 9;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
const cpuMs = (start) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

/** The memory job exactly as a pod gets it from `attachMemory`. */
function memoryJobOf(loaded, catalog, model) {
  let job;
  attachMemory(
    {
      manifest: loaded,
      catalog,
      modelAdapter: model,
      addContextSection: () => {},
      addAfterTurnJob: (registered) => {
        job = registered;
      },
      registerTool: () => {},
    },
    { config: { max_tokens: 1024 } },
  );
  return job;
}

/** What the pod's after-turn pass gets (pod.ts `afterTurnContext`); `incremental: false` leaves out `readFrom`. */
function contextOf(store, log, incremental) {
  const ref = { sessionId: log.state.sessionId, segmentId: log.state.segmentId };
  return {
    ...ref,
    signal: new AbortController().signal,
    final: false,
    extension: (domain) => log.state.extensions.get(domain),
    readEntries: (segmentId = ref.segmentId) => store.readAll({ sessionId: ref.sessionId, segmentId }),
    ...(incremental ? { readFrom: (segment, from) => store.readFrom(segment, from) } : {}),
    appendExtension: async (domain, payload) => {
      await log.append({ kind: "extension", domain, payload });
    },
    emit: () => {},
    onWorkerEvent: () => {},
  };
}

/** One session of TURNS turns, the job after each: CPU (ms) of the passes of the first and last WINDOW turns. */
async function session(setup, incremental) {
  const { root, loaded } = await workspaceWithManifest("podkit-bench-memory-growth-", setup.manifestExtra);
  const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
  try {
    const job = memoryJobOf(loaded, setup.catalog, setup.model);
    const log = await SessionLog.create(store, { systemPrompt: "You are a bench pod.", config: {} });
    const count = setup.turns ?? TURNS;
    const turns = makeEntries(count * ENTRIES_PER_TURN);
    let first = 0;
    let last = 0;
    for (let turn = 0; turn < count; turn++) {
      await log.appendMany(turns.slice(turn * ENTRIES_PER_TURN, (turn + 1) * ENTRIES_PER_TURN));
      const start = process.cpuUsage();
      await job.run(contextOf(store, log, incremental));
      const used = cpuMs(start);
      if (turn < WINDOW) first += used;
      if (turn >= count - WINDOW) last += used;
    }
    const extracts = [...log.state.extensions.keys()].length;
    if (extracts === 0) throw new Error("the bench session never extracted: check extract_threshold");
    return { first, last };
  } finally {
    await store.close();
    await rm(root, { recursive: true, force: true });
  }
}

const { child, baseUrl } = await startToolSessionDouble("anthropic", "memory-extract");
try {
  // ~10 turns per extract: a turn of turn-entries.mjs is about 300 estimated tokens.
  const manifestExtra =
    "[memory]\nextract_threshold = 3000\nconsolidation_threshold_files = 8\ngit_commit = false\n";
  const { root, loaded } = await workspaceWithManifest("podkit-bench-memory-growth-", manifestExtra);
  const { catalog } = await loadPodResources(loaded, { onWarning: () => {} });
  await rm(root, { recursive: true, force: true });
  const model = createModelAdapter(REF, { apiKey: "bench", baseUrl });
  const setup = { manifestExtra, catalog, model };
  const sides = { incremental: [], whole: [], incrementalLast: [], wholeLast: [] };
  // Warm-up, both sides: the first window must not pay for module loading and JIT.
  await session({ ...setup, turns: WINDOW }, true);
  await session({ ...setup, turns: WINDOW }, false);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [true, false] : [false, true];
    // BENCH_SIDE=1 (incremental) or 2 (whole read) runs one side only: for a profile of it.
    const side = knob("SIDE", 0);
    for (const incremental of order.filter((i) => side === 0 || side === (i ? 1 : 2))) {
      globalThis.gc?.();
      const { first, last } = await session(setup, incremental);
      (incremental ? sides.incremental : sides.whole).push(last / first);
      (incremental ? sides.incrementalLast : sides.wholeLast).push(last / WINDOW);
    }
  }
  const line = (name, xs, unit) =>
    xs.length > 0 &&
    console.log(`BENCH ${name} ${median(xs).toFixed(2)} ${unit} (spread ${spread(xs)}, ${ROUNDS} rounds)`);
  line("memory.after_turn.growth", sides.incremental, "x");
  line("memory.after_turn.growth.whole_read", sides.whole, "x");
  line("memory.after_turn.pass_cpu_last100", sides.incrementalLast, "ms");
  line("memory.after_turn.pass_cpu_last100.whole_read", sides.wholeLast, "ms");
} finally {
  child.send("stop");
  await new Promise((resolve) => child.once("exit", resolve));
}
