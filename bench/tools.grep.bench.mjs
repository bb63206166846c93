// Benchmark of @podkit/tools' builtin grep against GNU `grep -r` on the same tree, same run.
//   BENCH tools.grep.ratio              builtin / `grep -rnE`, regex pattern (median of per-round ratios)
//   BENCH tools.grep.builtin_ms         builtin grep over the tree (scope checks, .gitignore, real-path checks)
//   BENCH tools.grep.gnu_ms             `grep -rnE` over the same tree (spawned; includes process start)
//   BENCH tools.grep.literal.ratio      builtin / `grep -rnF`, a pattern without regex syntax
//   BENCH tools.grep.cpu_ratio          the same in CPU time (this process vs the grep child), steadier
//                                       than wall time on a loaded machine
//   BENCH tools.grep.max_loop_gap_ms    the longest event-loop stall during any builtin search (wall
//                                       time between two turns of a 1 ms timer)
//   BENCH tools.grep.max_loop_busy_ms   the most CPU the main thread spent between two such turns
//                                       (/proc schedstat): the stall the search itself causes, without
//                                       the time a loaded machine keeps the process waiting for a core
//   BENCH tools.grep.large_file.max_loop_gap_ms / .max_loop_busy_ms  the same searching one 15 MiB file
// The tree: 20,000 text files of ~1.5 KB in 400 directories, generated in a temp dir; 300 lines
// match. Both sides must report the same number of matching lines. Each round runs both sides,
// alternating which goes first; the spread (min–max of the per-round ratios) is printed as a
// comment. Requires a built package. Nine rounds.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Scope } from "../packages/manifest/dist/index.js";
// The tool itself, from its file (the package's public surface is the tool package).
import { grepTool } from "../packages/tools/dist/fs/grep-tool.js";

const FILES = 20_000;
const DIRS = 400;
const MATCHES = 300;
const ROUNDS = 9;
const CASES = [
  { name: "tools.grep", pattern: "needle_[0-9]+_found", gnuFlags: "-rnE" },
  { name: "tools.grep.literal", pattern: "_found", gnuFlags: "-rnF" },
];

const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-bench-grep-")));
try {
  const filler = Array.from(
    { length: 30 },
    (_, i) => `line ${i} of ordinary source text: const value = compute(${i});`,
  ).join("\n");
  for (let d = 0; d < DIRS; d++) await mkdir(join(root, `dir${d}`));
  const writes = [];
  for (let f = 0; f < FILES; f++) {
    const hit = f % Math.floor(FILES / MATCHES) === 0 ? `\nconst x = "needle_${f}_found";` : "";
    writes.push(writeFile(join(root, `dir${f % DIRS}`, `file${f}.ts`), `${filler}${hit}\n`));
    if (writes.length >= 256) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);

  const scope = await Scope.fromRules([{ target: root, permission: "read" }], [], root);
  const tool = grepTool({ scope, workspace: root });
  const signal = new AbortController().signal;
  // CPU (ms) of this process's waited-for children: /proc/self/stat fields cutime + cstime, in ticks.
  const childCpuMs = () => {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  };
  const ownCpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  /** Watches the event loop with a 1 ms timer while `fn` runs: the longest wall gap and CPU burst between turns. */
  // CPU (ms) of the main thread alone, whose tid is the pid: nanoseconds on CPU, first field.
  const schedstat = `/proc/${process.pid}/task/${process.pid}/schedstat`;
  const mainThreadCpuMs = () => Number(readFileSync(schedstat, "utf8").split(" ")[0]) / 1e6;
  const watchLoop = async (fn) => {
    let wall = performance.now();
    let cpu = mainThreadCpuMs();
    const worst = { gap: 0, busy: 0 };
    let timer;
    const tick = () => {
      const [nowWall, nowCpu] = [performance.now(), mainThreadCpuMs()];
      worst.gap = Math.max(worst.gap, nowWall - wall);
      worst.busy = Math.max(worst.busy, nowCpu - cpu);
      [wall, cpu] = [nowWall, nowCpu];
      timer = setTimeout(tick, 1);
    };
    timer = setTimeout(tick, 1);
    try {
      return { value: await fn(), ...worst };
    } finally {
      clearTimeout(timer);
      tick();
      clearTimeout(timer);
    }
  };
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const loop = { gap: 0, busy: 0, gaps: [] };

  for (const { name, pattern, gnuFlags } of CASES) {
    const builtin = async () => {
      const cpu = ownCpuMs();
      const start = process.hrtime.bigint();
      const {
        value: out,
        gap,
        busy,
      } = await watchLoop(() => tool.execute({ pattern, limit: 5000 }, { signal, callId: "bench" }));
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const cpuMs = ownCpuMs() - cpu;
      loop.gaps.push(gap);
      loop.gap = Math.max(loop.gap, gap);
      loop.busy = Math.max(loop.busy, busy);
      return { ms, cpuMs, lines: out.content.split("\n").filter(Boolean).length };
    };
    const gnu = () =>
      new Promise((resolve, reject) => {
        const cpu = childCpuMs();
        const start = process.hrtime.bigint();
        const child = spawn("grep", [gnuFlags, pattern, root], { stdio: ["ignore", "pipe", "inherit"] });
        let lines = 0;
        child.stdout.on("data", (chunk) => {
          for (const byte of chunk) if (byte === 10) lines++;
        });
        child.on("error", reject);
        child.on("close", () =>
          resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, cpuMs: childCpuMs() - cpu, lines }),
        );
      });

    // Warm-up and agreement check.
    const [b0, g0] = [await builtin(), await gnu()];
    assert.equal(b0.lines, g0.lines, `${name}: both sides must find the same matching lines`);
    assert.ok(b0.lines >= MATCHES, `${name}: expected at least ${MATCHES} lines, got ${b0.lines}`);
    const times = { builtin: [], gnu: [], ratio: [], cpuRatio: [] };
    for (let round = 0; round < ROUNDS; round++) {
      let b;
      let g;
      if (round % 2 === 0) {
        b = await builtin();
        g = await gnu();
      } else {
        g = await gnu();
        b = await builtin();
      }
      times.builtin.push(b.ms);
      times.gnu.push(g.ms);
      times.ratio.push(b.ms / g.ms);
      times.cpuRatio.push(b.cpuMs / Math.max(g.cpuMs, 10));
    }
    const ratios = [...times.ratio].sort((a, b) => a - b);
    console.log(`BENCH ${name}.ratio ${median(ratios).toFixed(2)} x`);
    console.log(`BENCH ${name}.builtin_ms ${median(times.builtin).toFixed(1)} ms`);
    console.log(`BENCH ${name}.gnu_ms ${median(times.gnu).toFixed(1)} ms`);
    console.log(`BENCH ${name}.cpu_ratio ${median(times.cpuRatio).toFixed(2)} x`);
    console.log(
      `# ${name}.ratio spread ${ratios[0].toFixed(2)}–${ratios[ratios.length - 1].toFixed(2)} over ${ROUNDS} rounds (alternating order)`,
    );
  }
  console.log(`BENCH tools.grep.max_loop_gap_ms ${loop.gap.toFixed(1)} ms`);
  console.log(`BENCH tools.grep.max_loop_busy_ms ${loop.busy.toFixed(1)} ms`);

  // One large file: without chunked reading its decode, regex and line split run in one go.
  const large = join(root, "large");
  await mkdir(large);
  const block = `${filler}\nconst x = "needle_1_found";\n`;
  await writeFile(join(large, "bundle.js"), block.repeat(Math.ceil((15 * 1024 * 1024) / block.length)));
  const largeLoop = { gap: 0, busy: 0 };
  for (let round = 0; round < 5; round++) {
    const { gap, busy } = await watchLoop(async () => {
      await tool.execute(
        { pattern: CASES[0].pattern, path: "large", limit: 50 },
        { signal, callId: "bench" },
      );
      await tool.execute({ pattern: "no_such_[0-9]+_text", path: "large" }, { signal, callId: "bench" });
    });
    largeLoop.gap = Math.max(largeLoop.gap, gap);
    largeLoop.busy = Math.max(largeLoop.busy, busy);
  }
  console.log(`BENCH tools.grep.large_file.max_loop_gap_ms ${largeLoop.gap.toFixed(1)} ms`);
  console.log(`BENCH tools.grep.large_file.max_loop_busy_ms ${largeLoop.busy.toFixed(1)} ms`);
  console.log(
    `# tools.grep loop gap: median ${median(loop.gaps).toFixed(1)} ms over ${loop.gaps.length} searches; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
