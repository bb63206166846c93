// Profiling variant of the restore half of bench/pod.overhead.bench.mjs: `Pod.restore` of a
// 10,000-entry session, or (`store`) `restoreSession` of it, `count` times, so
// `node --cpu-prof bench/lib/profile-pod-restore.mjs pod` profiles one side alone. Prints the
// median CPU per restore; not a bench (no BENCH line).
import { rm } from "node:fs/promises";
import { Pod } from "../../packages/pod/dist/index.js";
import { FsStore, restoreSession, SessionLog, sessionsRoot } from "../../packages/session-store/dist/index.js";
import { toolPackage, workspaceWithManifest } from "./pod-bench-workspace.mjs";

const side = process.argv[2] ?? "pod";
const count = Number(process.argv[3] ?? 20);
const { root, loaded } = await workspaceWithManifest("podkit-prof-restore-");
const store = new FsStore({ root: sessionsRoot(loaded.workspace) });
const options = { model: "http://127.0.0.1:9/v1", env: { ANTHROPIC_API_KEY: "bench" }, onWarning: () => {}, toolPackages: [toolPackage], store };
try {
  const log = await SessionLog.create(store, { systemPrompt: "You are a bench pod.", config: { max_tokens: 8192 } });
  for (let turn = 1; log.entryCount < 10_000; turn++) {
    const call = { type: "tool_call", call_id: `toolu_${turn}`, name: "lookup", arguments: '{"query":"x"}' };
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: `Question number ${turn}?` },
      { kind: "llm_usage", history_len: turn * 4, input_tokens: 2000, cache_read_tokens: 1800, cache_write_tokens: 0, output_tokens: 30 },
      { kind: "assistant_item", item: call },
      { kind: "tool_result", item: { type: "tool_result", call_id: call.call_id, summary: "found x", content: "result line\n".repeat(20) } },
      { kind: "assistant_item", item: { type: "message", role: "assistant", content: [{ type: "text", text: "Here is the answer." }] } },
      { kind: "turn_end", turn },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
  }
  const sessionId = log.state.sessionId;
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
