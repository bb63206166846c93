// Profiling variant of bench/pod.overhead.bench.mjs: runs only one side (`pod` or `worker`) for
// many 30-turn sessions so `node --cpu-prof bench/lib/profile-pod-overhead.mjs pod` gives a
// profile of that side's turns alone. Not a bench (prints no BENCH line).
import { rm } from "node:fs/promises";
import { createModelAdapter, ToolServer, Worker } from "../../packages/llm-worker/dist/index.js";
import { Pod } from "../../packages/pod/dist/index.js";
import { lookup, REF, toolPackage, workspaceWithManifest } from "./pod-bench-workspace.mjs";
import { startToolSessionDouble } from "./tool-session-double.mjs";

const side = process.argv[2] ?? "pod";
const sessions = Number(process.argv[3] ?? 20);
const TURNS = 30;

const { child, baseUrl } = await startToolSessionDouble("anthropic");
const { root, loaded } = await workspaceWithManifest("podkit-prof-pod-");
const options = {
  model: baseUrl,
  env: { ANTHROPIC_API_KEY: "bench" },
  onWarning: () => {},
  toolPackages: [toolPackage],
};
try {
  const probe = await Pod.fromManifest(loaded, options);
  const prompt = await probe.renderSystemPrompt();
  await probe.close();
  let cpu = 0;
  for (let session = 0; session < sessions; session++) {
    const runner =
      side === "pod"
        ? await Pod.fromManifest(loaded, options)
        : (() => {
            const tools = new ToolServer();
            tools.registerTool(lookup);
            return new Worker({
              model: createModelAdapter(REF, { apiKey: "bench", baseUrl }),
              systemPrompt: prompt,
              tools,
            });
          })();
    const start = process.cpuUsage();
    for (let turn = 0; turn < TURNS; turn++) {
      const result = await runner.run(`Question number ${turn}?`);
      if (result.status !== "finished") throw new Error(JSON.stringify(result));
    }
    const used = process.cpuUsage(start);
    cpu += (used.user + used.system) / 1000;
    if (side === "pod") await runner.close();
  }
  console.log(`${side}: ${(cpu / sessions).toFixed(0)} ms CPU per 30-turn session`);
} finally {
  child.send("stop");
  await new Promise((resolve) => child.once("exit", resolve));
  await rm(root, { recursive: true, force: true });
}
