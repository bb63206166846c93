// The cost of the OS sandbox around `bash` (docs/sandbox.md): the wall time of a sandboxed bash
// call against the same call unsandboxed, both through the real tool (tool server, runCommand,
// bubblewrap), measured in the same run.
//   BENCH tools.bash.sandbox.ratio             sandboxed / unsandboxed, `true` (median of per-round ratios)
//   BENCH tools.bash.sandbox.sleep200.ratio    the same for `sleep 0.2` (a 200 ms command)
//   BENCH tools.bash.sandbox.network.ratio     `true` with a host allowed (the proxy relay starts in the sandbox)
//   BENCH tools.bash.sandbox.true_ms / .unsandboxed_true_ms   the medians behind the first ratio
//   BENCH tools.bash.sandbox.startup_ms        what the sandbox adds to a pod's start: loading the tools
//                                              with the probe (bwrap --version, a sandboxed `true`)
//                                              minus loading them with backend = "none" (median)
// Each round runs both sides, alternating which goes first; the spread (min–max of the per-round
// ratios) is printed as a comment. BENCH_ROUNDS (15) rounds per case. Needs a built tree and bubblewrap (Linux). Aim (issue 39):
// ≤ 1.5 for `true`, ≤ 1.1 for the 200 ms command.
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ToolServer } from "../packages/llm-worker/dist/index.js";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { loadToolPackages } from "../packages/tools/dist/index.js";
import { knob } from "./lib/knobs.mjs";

const ROUNDS = knob("ROUNDS", 15);
const STARTS = 9;

const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-bench-sandbox-")));
try {
  const ws = join(root, "ws");
  await mkdir(ws, { recursive: true });
  const manifest = async (name, sandbox) => {
    const file = join(ws, `${name}.toml`);
    await writeFile(
      file,
      `[pod]\nname = "bench"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[[scope.allow]]\ntarget = "."\npermission = "write"\n[[scope.deny]]\ntarget = ".env"\npermission = "read"\n[tools]\nbash = true\n${sandbox}`,
    );
    return loadManifest({ file, env: { cwd: ws, home: join(root, "home"), env: {} } });
  };
  await writeFile(join(ws, ".env"), "SECRET=1\n");
  const loaded = {
    none: await manifest("none", '[sandbox]\nbackend = "none"\n'),
    os: await manifest("os", ""),
    network: await manifest("network", '[sandbox.network]\nallow = ["127.0.0.1:9"]\n'),
  };
  const warn = (w) => console.error(`# warning: ${w.message}`);
  const open = async (which) => {
    const set = await loadToolPackages(loaded[which], { warn });
    const server = new ToolServer();
    set.register(server);
    await server.flushPending();
    let n = 0;
    const call = async (command) => {
      const started = performance.now();
      const result = await server.execute(
        { type: "tool_call", call_id: `c${++n}`, name: "bash", arguments: JSON.stringify({ command }) },
        new AbortController().signal,
      );
      const ms = performance.now() - started;
      if (result.summary !== "exit code 0")
        throw new Error(`${which}: ${command}: ${result.summary} ${result.content}`);
      return ms;
    };
    return { set, call };
  };
  const pods = { none: await open("none"), os: await open("os"), network: await open("network") };
  const probe = pods.os.set.sandboxProbe();
  console.log(
    `# sandbox: ${probe.backend} ${probe.version}, active=${probe.active}; load ${loadavg()[0].toFixed(2)}`,
  );

  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  const compare = async (sandboxed, command) => {
    // Warm both paths (page cache, the placeholders, the proxy) before measuring.
    await pods.none.call(command);
    await sandboxed.call(command);
    const ratios = [];
    const times = { sandboxed: [], bare: [] };
    for (let round = 0; round < ROUNDS; round++) {
      let bare;
      let boxed;
      if (round % 2 === 0) {
        bare = await pods.none.call(command);
        boxed = await sandboxed.call(command);
      } else {
        boxed = await sandboxed.call(command);
        bare = await pods.none.call(command);
      }
      times.bare.push(bare);
      times.sandboxed.push(boxed);
      ratios.push(boxed / bare);
    }
    return { ratio: median(ratios), ratios, sandboxed: median(times.sandboxed), bare: median(times.bare) };
  };

  const fast = await compare(pods.os, "true");
  console.log(
    `# true: per-round ratios ${Math.min(...fast.ratios).toFixed(2)}–${Math.max(...fast.ratios).toFixed(2)}`,
  );
  console.log(`BENCH tools.bash.sandbox.ratio ${fast.ratio.toFixed(2)} x`);
  console.log(`BENCH tools.bash.sandbox.true_ms ${fast.sandboxed.toFixed(1)} ms`);
  console.log(`BENCH tools.bash.sandbox.unsandboxed_true_ms ${fast.bare.toFixed(1)} ms`);

  const slow = await compare(pods.os, "sleep 0.2");
  console.log(
    `# sleep 0.2: per-round ratios ${Math.min(...slow.ratios).toFixed(2)}–${Math.max(...slow.ratios).toFixed(2)}`,
  );
  console.log(`BENCH tools.bash.sandbox.sleep200.ratio ${slow.ratio.toFixed(2)} x`);
  console.log(`BENCH tools.bash.sandbox.sleep200_ms ${slow.sandboxed.toFixed(1)} ms`);
  console.log(`BENCH tools.bash.sandbox.unsandboxed_sleep200_ms ${slow.bare.toFixed(1)} ms`);

  const network = await compare(pods.network, "true");
  console.log(`BENCH tools.bash.sandbox.network.ratio ${network.ratio.toFixed(2)} x`);

  for (const pod of Object.values(pods)) await pod.set.close();

  // Start-up: loading the tools (the probe included) with and without the sandbox, alternating.
  const starts = { os: [], none: [] };
  for (let i = 0; i < STARTS; i++) {
    for (const which of i % 2 === 0 ? ["os", "none"] : ["none", "os"]) {
      const started = performance.now();
      const set = await loadToolPackages(loaded[which], { warn });
      starts[which].push(performance.now() - started);
      await set.close();
    }
  }
  console.log(`# start-up: os ${median(starts.os).toFixed(1)} ms, none ${median(starts.none).toFixed(1)} ms`);
  console.log(
    `BENCH tools.bash.sandbox.startup_ms ${(median(starts.os) - median(starts.none)).toFixed(1)} ms`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
