// Benchmark of @podkit/tools' builtin grep against GNU `grep -r` on the same tree, same run.
//   BENCH tools.grep.ratio      builtin grep time / grep -r time (median of alternating runs)
//   BENCH tools.grep.builtin_ms builtin grep over the tree (scope checks, .gitignore, real-path checks)
//   BENCH tools.grep.gnu_ms     `grep -rn` over the same tree (spawned; includes process start)
// The tree: 20,000 text files of ~1.5 KB in 400 directories, generated in a temp dir; 300 lines
// match. Both sides must report the same number of matching lines. Requires a built package.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Scope } from "../packages/manifest/dist/index.js";
// The tool itself, from its file (the package's public surface is the tool package).
import { grepTool } from "../packages/tools/dist/fs/grep-tool.js";

const FILES = 20_000;
const DIRS = 400;
const MATCHES = 300;
const NEEDLE = "needle_[0-9]+_found";

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
  const builtin = async () => {
    const out = await tool.execute({ pattern: NEEDLE, limit: 5000 }, { signal, callId: "bench" });
    return out.content.split("\n").filter(Boolean).length;
  };
  const gnu = () =>
    new Promise((resolve, reject) => {
      const child = spawn("grep", ["-rnE", NEEDLE, root], { stdio: ["ignore", "pipe", "inherit"] });
      let lines = 0;
      child.stdout.on("data", (chunk) => {
        for (const byte of chunk) if (byte === 10) lines++;
      });
      child.on("error", reject);
      child.on("close", () => resolve(lines));
    });

  assert.equal(await builtin(), await gnu(), "both sides must find the same matching lines");
  const time = async (fn) => {
    const start = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const times = { builtin: [], gnu: [] };
  for (let round = 0; round < 7; round++) {
    times.builtin.push(await time(builtin));
    times.gnu.push(await time(gnu));
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const b = median(times.builtin);
  const g = median(times.gnu);
  console.log(`BENCH tools.grep.ratio ${(b / g).toFixed(2)} x`);
  console.log(`BENCH tools.grep.builtin_ms ${b.toFixed(1)} ms`);
  console.log(`BENCH tools.grep.gnu_ms ${g.toFixed(1)} ms`);
} finally {
  await rm(root, { recursive: true, force: true });
}
