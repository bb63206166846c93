// What an eval by replay costs (docs/evals.md), against the provider double.
//
// Each round records SESSIONS sessions of TURNS tool turns (a `lookup` call, then an answer) with
// real pods on a FsStore, then replays them with `runEval` (`replay` tools, the same double, one
// item at a time). The double runs in a child process, so `process.cpuUsage()` counts the client
// side only. The recording side is each session's own cost: its pod opened, its turns, closed —
// an item must open its pod as the recording did; the eval side is everything `runEval` does for
// the same sessions: reading each recording, a pod per item, the replayed turns, the scorers, the
// `eval.score` entries and the item files. Both run in the same process, round after round, who
// goes first alternating, so a change of load hits both alike.
//
//   BENCH eval.replay.items_per_s   items replayed per second of wall time (one at a time)
//   BENCH eval.replay.cpu_ratio     eval CPU / recording CPU of the same sessions (aim ≤ 1.2)
import { rm } from "node:fs/promises";
import { Pod, runEval } from "../packages/pod/dist/index.js";
import { FsStore, sessionsRoot } from "../packages/session-store/dist/index.js";
import { knob } from "./lib/knobs.mjs";
import { toolPackage, workspaceWithManifest } from "./lib/pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./lib/tool-session-double.mjs";

const SESSIONS = knob("SESSIONS", 20);
const TURNS = knob("TURNS", 3);
const ROUNDS = knob("ROUNDS", 7);

const podOptions = (baseUrl) => ({
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "bench" },
  onWarning: (warning) => {
    throw new Error(`unexpected warning: ${warning.code} ${warning.message}`);
  },
  toolPackages: [toolPackage],
});

const cpuMs = (since) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** Records the sessions; resolves their ids, the CPU of their pods (open, turns, close) and of their turns alone. */
async function record(loaded, baseUrl) {
  globalThis.gc?.();
  const start = process.cpuUsage();
  const sessions = [];
  let turns = 0;
  for (let n = 0; n < SESSIONS; n++) {
    const pod = await Pod.fromManifest(loaded, podOptions(baseUrl));
    for (let turn = 0; turn < TURNS; turn++) {
      const turnStart = process.cpuUsage();
      const result = await pod.run(`Session ${n}, question number ${turn}?`).result;
      turns += cpuMs(turnStart);
      if (result.status !== "finished") throw new Error(`recording: ${JSON.stringify(result)}`);
    }
    sessions.push(pod.sessionId);
    await pod.close();
  }
  return { sessions, cpu: cpuMs(start), turns };
}

/** Replays the sessions; resolves the eval's CPU and wall time. */
async function replay(loaded, baseUrl, store, sessions, round) {
  const { model: _model, ...options } = podOptions(baseUrl);
  globalThis.gc?.();
  const start = process.cpuUsage();
  const began = performance.now();
  const report = await runEval({
    cases: sessions.map((sessionId) => ({ sessionId })),
    store,
    variant: { manifest: loaded, model: baseUrl },
    podOptions: options,
    evalId: `bench-${round}`,
    concurrency: 1,
  });
  const wallMs = performance.now() - began;
  const cpu = cpuMs(start);
  const regressed = report.items.filter(
    (item) => !item.pass || item.difference !== 0 || item.divergences.length > 0,
  );
  if (regressed.length > 0)
    throw new Error(`the replay differs from the recording: ${JSON.stringify(regressed[0])}`);
  return { cpu, wallMs };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

const { child, baseUrl } = await startToolSessionDouble("anthropic");
const { root, loaded } = await workspaceWithManifest("podkit-bench-eval-");
const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
try {
  // Warm-up: both paths once.
  await replay(loaded, baseUrl, store, (await record(loaded, baseUrl)).sessions, "warm");
  const ratios = [];
  const rates = [];
  const recordCpu = [];
  const turnsCpu = [];
  const evalCpu = [];
  for (let round = 0; round < ROUNDS; round++) {
    // The recording is made before it can be replayed; the next round's goes after this round's eval.
    const recorded = await record(loaded, baseUrl);
    const replayed = await replay(loaded, baseUrl, store, recorded.sessions, round);
    ratios.push(replayed.cpu / recorded.cpu);
    rates.push(SESSIONS / (replayed.wallMs / 1000));
    recordCpu.push(recorded.cpu);
    turnsCpu.push(recorded.turns);
    evalCpu.push(replayed.cpu);
  }
  console.log(
    `# ${SESSIONS} sessions of ${TURNS} tool turns a round, ${ROUNDS} rounds; CPU per round: recording ${median(recordCpu).toFixed(0)} ms (its turns alone ${median(turnsCpu).toFixed(0)} ms), eval ${median(evalCpu).toFixed(0)} ms`,
  );
  console.log(`BENCH eval.replay.items_per_s ${median(rates).toFixed(1)} items/s (spread ${spread(rates)})`);
  console.log(
    `BENCH eval.replay.cpu_ratio ${median(ratios).toFixed(2)} x (spread ${spread(ratios)}, ${ROUNDS} rounds)`,
  );
} finally {
  await store.close();
  child.send("stop");
  await new Promise((resolve) => child.once("exit", resolve));
  await rm(root, { recursive: true, force: true });
}
