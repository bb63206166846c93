// Does a pod's cost stay flat as its session grows? Requires a built workspace.
//   BENCH pod.long_session.growth     the pod's CPU per turn over the last 100 turns of a 2,000-turn
//                                     session ÷ over its first 100 (aim ≤ 1.2: flat)
//   BENCH pod.long_session.turn_cpu_first100 / _last100   mean CPU of a turn in those windows (ms)
//   BENCH pod.long_session.compactions                   compactions in the session (≥ 3)
//   BENCH pod.long_session.peak_rss_mb                   the process's peak RSS at the end
//   BENCH pod.long_session.restore_ms                    `Pod.restore` of the final session (wall)
// The session: the tool-session script (a `lookup` call with 2 KB of output, then an answer) on
// the provider double in a child process (only the client side is measured), a context section
// whose data changes every 50 turns, a notification every 10 turns, memory attached by the pod
// (`[memory]`; the after-turn job extracts every few turns, consolidation every 8 staging files),
// and `[compaction]` thresholds that compact every few hundred turns. A turn's CPU counts its run
// and the after-turn jobs it started (`whenJobsIdle`). A warm-up session of 100 turns runs first,
// so the first window does not pay for module loading and JIT. Median of BENCH_ROUNDS rounds (5).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import { knob } from "./lib/knobs.mjs";
import { startLongSessionDouble } from "./lib/long-session-double.mjs";
import { lookupPackage } from "./lib/pod-bench-workspace.mjs";

const TURNS = knob("TURNS", 2_000);
const ROUNDS = knob("ROUNDS", 5);
const WINDOW = 100;
const MANIFEST = [
  '[pod]\nname = "bench"',
  '[model]\nref = "anthropic/claude-sonnet-4-5"',
  "[tools]\nbuiltin = []",
  "[memory]\nextract_threshold = 4000\nconsolidation_threshold_files = 8\ngit_commit = false",
  "[compaction]\nthreshold = 40000\nrequest_threshold = 42000\nretained_tokens = 8000\nprune_protected_tokens = 12000\nprune_min_savings = 4096",
].join("\n");

const toolPackage = lookupPackage(70);

/** A context section whose data changes every 50 turns (a file list, a branch name…). */
const statusSection = {
  id: "status",
  load: (state) => ({ phase: Math.floor(state.turn / 50) }),
  render: (data) => `Phase ${data.phase} of the bench project.`,
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;

async function workspace() {
  const root = await mkdtemp(join(tmpdir(), "podkit-bench-long-"));
  const dir = join(root, "project");
  await mkdir(join(dir, ".podkit"), { recursive: true });
  await writeFile(join(dir, ".podkit", "manifest.toml"), `${MANIFEST}\n`);
  const loaded = await loadManifest({ env: { cwd: dir, home: join(root, "home"), env: {} } });
  return { root, loaded };
}

function podOptions(baseUrl) {
  return {
    model: baseUrl,
    env: { ANTHROPIC_API_KEY: "bench" },
    onWarning: (warning) => {
      throw new Error(`unexpected warning: ${warning.code} ${warning.message}`);
    },
    toolPackages: [toolPackage],
    contextSections: [statusSection],
    packages: { "@podkit/memory": () => import("../packages/memory/dist/index.js") },
  };
}

/** One session of `turns` turns: CPU (ms) of each turn, the compactions, the session id. */
async function session(loaded, baseUrl, turns) {
  const pod = await Pod.fromManifest(loaded, podOptions(baseUrl));
  const cpu = [];
  let compactions = 0;
  for (let turn = 0; turn < turns; turn++) {
    if (turn % 10 === 5) pod.notify(`Build ${turn} finished: all green.`);
    const start = process.cpuUsage();
    const run = pod.run(`Question number ${turn}?`);
    for await (const event of run) if (event.type === "compaction_done") compactions += 1;
    const result = await run;
    await pod.whenJobsIdle();
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
    if (result.status !== "finished") throw new Error(`turn ${turn}: ${JSON.stringify(result)}`);
  }
  const sessionId = pod.sessionId;
  await pod.close({ timeoutMs: 60_000 });
  return { cpu, compactions, sessionId };
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const { child, baseUrl } = await startLongSessionDouble();
try {
  const warm = await workspace();
  await session(warm.loaded, baseUrl, WINDOW);
  await rm(warm.root, { recursive: true, force: true });
  const growth = [];
  const first = [];
  const last = [];
  const compactions = [];
  const restores = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { root, loaded } = await workspace();
    try {
      globalThis.gc?.();
      const result = await session(loaded, baseUrl, TURNS);
      const head = sum(result.cpu.slice(0, WINDOW)) / WINDOW;
      const tail = sum(result.cpu.slice(-WINDOW)) / WINDOW;
      growth.push(tail / head);
      first.push(head);
      last.push(tail);
      compactions.push(result.compactions);
      const start = performance.now();
      const restored = await Pod.restore(loaded, result.sessionId, {
        ...podOptions(baseUrl),
        attachMemory: false,
      });
      restores.push(performance.now() - start);
      await restored.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }
  const line = (name, xs, unit, digits = 2) =>
    console.log(
      `BENCH ${name} ${median(xs).toFixed(digits)} ${unit} (spread ${spread(xs)}, ${ROUNDS} rounds)`,
    );
  line("pod.long_session.growth", growth, "x");
  line("pod.long_session.turn_cpu_first100", first, "ms");
  line("pod.long_session.turn_cpu_last100", last, "ms");
  line("pod.long_session.compactions", compactions, "count", 0);
  console.log(`BENCH pod.long_session.peak_rss_mb ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
  line("pod.long_session.restore_ms", restores, "ms", 1);
} finally {
  child.send("stop");
  await new Promise((resolve) => child.once("exit", resolve));
}
