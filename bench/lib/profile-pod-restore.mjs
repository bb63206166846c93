// Profiling variant of the restore half of bench/pod.overhead.bench.mjs: `Pod.restore` of a
// 10,000-entry session, or (`store`) `restoreSession` of it, `count` times, so
// `node --cpu-prof bench/lib/profile-pod-restore.mjs pod` profiles one side alone. Prints the
// median CPU per restore; not a bench (no BENCH line).
import { rm } from "node:fs/promises";
import { Pod } from "../../packages/pod/dist/index.js";
import { FsStore, restoreSession, sessionsRoot } from "../../packages/session-store/dist/index.js";
import { bigSession, toolPackage, workspaceWithManifest } from "./pod-bench-workspace.mjs";

const side = process.argv[2] ?? "pod";
const count = Number(process.argv[3] ?? 20);
const { root, loaded } = await workspaceWithManifest("podkit-prof-restore-");
const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
const options = {
  model: "http://127.0.0.1:9/v1",
  env: { ANTHROPIC_API_KEY: "bench" },
  onWarning: () => {},
  toolPackages: [toolPackage],
  store,
};
try {
  const sessionId = await bigSession(store, 10_000);
  const times = [];
  for (let i = 0; i < count; i++) {
    const start = process.cpuUsage();
    if (side === "pod") await (await Pod.restore(loaded, sessionId, options)).close();
    else await restoreSession(store, sessionId);
    const used = process.cpuUsage(start);
    times.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(`${side}: ${times[Math.floor(count / 2)].toFixed(1)} ms CPU per restore (median of ${count})`);
} finally {
  await store.close();
  await rm(root, { recursive: true, force: true });
}
