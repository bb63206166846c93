// What recording file changes costs a turn (issue 42, docs/rewind.md "What is tracked"): the wall
// time of a turn through `Pod` on a 5,000-file workspace with tracking on (the default) against
// the same turn with `[tools] track_files = false`, both with the default sandbox (bubblewrap on
// Linux) and the filesystem store.
//   BENCH pod.file_tracking.edit_file.ratio   a turn with one edit_file call, then the answer
//   BENCH pod.file_tracking.bash.ratio        a turn with one bash command that rewrites a file
//   BENCH pod.file_tracking.bash_ms / untracked_bash_ms   the medians behind the bash ratio
//   BENCH pod.file_tracking.first_scan_ms     the first scan of a pod (every file read and stored
//                                             in the blobs), which runs in the background from the
//                                             first run's start; measured by a tracked pod's first
//                                             bash turn minus an untracked one's
// Each side has its own workspace and its own provider double (in a child process, so its CPU is
// not the pod's); each round runs one turn of each kind on both sides, alternating which goes
// first, after a warm-up turn of each (which takes the first scan). Medians of the per-round
// ratios, the spread printed as a comment. BENCH_ROUNDS (15) rounds, BENCH_FILES (5000) files.
// Aim (issue 42): ≤ 1.1 for edit_file, ≤ 1.5 for bash. Measured on a shared two-core VM (load
// 2.7, 2026-12-06, 25 rounds): edit_file 1.08, bash 2.38 (131 ms against 61: ~50 ms of `lstat`
// over the 5,000 files, ~10 ms to read and store what changed), first scan 2.5–3.9 s.
import { fork } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { knob } from "./lib/knobs.mjs";

const self = fileURLToPath(import.meta.url);
const ROUNDS = knob("ROUNDS", 15);
const FILES = knob("FILES", 5000);

/** Turns in a loop: an edit_file turn flipping `= 1` to `= 2`, a bash turn, the edit back, a bash turn. */
const call = (name, args) => ({ parts: [{ type: "tool_call", name, arguments: args }] });
const answer = { parts: [{ type: "text", text: "Done." }] };
const EDIT = (from, to) =>
  call("edit_file", { path: "src/d0/f0.ts", old_string: `= ${from};`, new_string: `= ${to};` });
const BASH = call("bash", { command: "date +%s%N > stamp.txt" });
const SCRIPT = [EDIT(1, 2), answer, BASH, answer, EDIT(2, 1), answer, BASH, answer];

if (process.argv[2] === "double") {
  const { startProviderDouble } = await import("../packages/testkit/dist/index.js");
  const double = await startProviderDouble({ wire: "anthropic", loop: true, responses: SCRIPT });
  process.send(double.baseUrl);
  process.on("message", async () => {
    await double.close();
    process.exit(0);
  });
} else {
  await main();
}

function startDoubles() {
  const child = fork(self, ["double"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve) => child.once("message", (baseUrl) => resolve({ child, baseUrl })));
}

/** A workspace of `FILES` small source files in 100 directories, with a manifest (`extra` appended). */
async function workspace(root, name, extra) {
  const ws = join(root, name);
  const perDir = Math.ceil(FILES / 100);
  for (let d = 0; d < 100; d++) {
    await mkdir(join(ws, "src", `d${d}`), { recursive: true });
    for (let f = 0; f < perDir && d * perDir + f < FILES; f++) {
      await writeFile(
        join(ws, "src", `d${d}`, `f${f}.ts`),
        `export const v${d}_${f} = 1;\n// ${"x".repeat(200 + (f % 40) * 10)}\n`,
      );
    }
  }
  await mkdir(join(ws, ".podkit"), { recursive: true });
  await writeFile(
    join(ws, ".podkit", "manifest.toml"),
    `[pod]\nname = "bench"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nbash = true\n${extra}`,
  );
  return ws;
}

async function main() {
  const { Pod } = await import("../packages/pod/dist/index.js");
  const { loadManifest } = await import("../packages/manifest/dist/index.js");
  const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-bench-tracking-")));
  const doubles = { tracked: await startDoubles(), untracked: await startDoubles() };
  try {
    const sides = {};
    for (const [side, extra] of [
      ["tracked", ""],
      ["untracked", "track_files = false\n"],
    ]) {
      const ws = await workspace(root, side, extra);
      const loaded = await loadManifest({ env: { cwd: ws, home: join(root, "home"), env: {} } });
      const warnings = [];
      const pod = await Pod.fromManifest(loaded, {
        model: doubles[side].baseUrl,
        mode: "bypass",
        env: { ANTHROPIC_API_KEY: "bench", PATH: process.env.PATH },
        onWarning: (w) => warnings.push(w.message),
      });
      sides[side] = { pod, warnings, next: 0 };
    }
    // The double answers each side's turns in its script's order: edit, bash, edit, bash, …
    const turn = async (side, kind) => {
      const expected = sides[side].next++ % 2 === 0 ? "edit" : "bash";
      if (kind !== expected) throw new Error(`${side}: a ${kind} turn out of order`);
      const started = performance.now();
      const result = await sides[side].pod.run(`a ${kind} turn`);
      const ms = performance.now() - started;
      if (result.status !== "finished" || result.requests !== 2)
        throw new Error(`${side} ${kind}: ${JSON.stringify(result)} ${sides[side].warnings.join("; ")}`);
      return ms;
    };

    // The first turns of each side: the tracked pod's bash turn waits for its first scan to end.
    const first = {};
    for (const side of ["tracked", "untracked"]) {
      await turn(side, "edit");
      first[side] = await turn(side, "bash");
    }
    console.log(`# load ${loadavg()[0].toFixed(2)}; ${FILES} files`);

    const times = {
      edit: { tracked: [], untracked: [], ratios: [] },
      bash: { tracked: [], untracked: [], ratios: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["tracked", "untracked"] : ["untracked", "tracked"];
      for (const kind of ["edit", "bash"]) {
        for (const side of order) times[kind][side].push(await turn(side, kind));
        times[kind].ratios.push(times[kind].tracked.at(-1) / times[kind].untracked.at(-1));
      }
    }
    const results = {};
    for (const kind of ["edit", "bash"]) {
      const { ratios } = times[kind];
      results[kind] = {
        ratio: median(ratios),
        tracked: median(times[kind].tracked),
        untracked: median(times[kind].untracked),
      };
      console.log(
        `# ${kind}: per-round ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}; tracked ${results[kind].tracked.toFixed(1)} ms, untracked ${results[kind].untracked.toFixed(1)} ms`,
      );
    }
    for (const side of ["tracked", "untracked"]) {
      await sides[side].pod.close();
      if (sides[side].warnings.length > 0)
        console.log(`# ${side} warnings: ${sides[side].warnings.join("; ")}`);
    }
    console.log(`BENCH pod.file_tracking.edit_file.ratio ${results.edit.ratio.toFixed(2)} ratio`);
    console.log(`BENCH pod.file_tracking.bash.ratio ${results.bash.ratio.toFixed(2)} ratio`);
    console.log(`BENCH pod.file_tracking.bash_ms ${results.bash.tracked.toFixed(1)} ms`);
    console.log(`BENCH pod.file_tracking.untracked_bash_ms ${results.bash.untracked.toFixed(1)} ms`);
    console.log(`BENCH pod.file_tracking.first_scan_ms ${(first.tracked - first.untracked).toFixed(0)} ms`);
  } finally {
    for (const { child } of Object.values(doubles)) child.send("stop");
    await rm(root, { recursive: true, force: true });
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
