// What a rewind costs the prompt cache (docs/rewind.md, "Rewinding"), against the provider double.
//
// A session of 8 turns, each writing a file with write_file and answering, on the Anthropic wire;
// then `rewindSession` back to turn 4 (conversation and files), `Pod.restore` and one more turn.
// `simulatePromptCache` bills the captured requests by Anthropic's rules; the figure is the share of
// the first request after the rewind that it reads from the cache — the fork's prefix is the
// original's, byte for byte, so everything up to the end of turn 4 was written by an earlier request.
//
//   BENCH pod.rewind.cache_read_share   cache reads / input tokens of that request (aim ≥ 0.9)
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { Pod, rewindSession } from "../packages/pod/dist/index.js";
import { FsStore, sessionsRoot } from "../packages/session-store/dist/index.js";
import { simulatePromptCache, startProviderDouble } from "../packages/testkit/dist/index.js";
import { REF } from "./lib/pod-bench-workspace.mjs";

const TURNS = 8;
const TO_TURN = 4;
const TOOLS =
  '[tools]\nbuiltin = ["read_file", "write_file"]\n[[scope.allow]]\ntarget = ".."\npermission = "write"\n';

const note = (turn) =>
  `# Notes of turn ${turn}\n\n${`Finding ${turn}: the module does what it says. `.repeat(40)}\n`;
const writeNote = (turn) => ({
  parts: [
    {
      type: "tool_call",
      name: "write_file",
      arguments: { path: `notes/turn-${turn}.md`, content: note(turn) },
    },
  ],
});
const answer = (turn) => ({
  parts: [{ type: "text", text: `Turn ${turn}: wrote the notes. ${"Details. ".repeat(30)}` }],
});

const root = await mkdtemp(join(tmpdir(), "podkit-bench-rewind-"));
const workspace = join(root, "project");
await mkdir(join(workspace, ".podkit"), { recursive: true });
await writeFile(
  join(workspace, ".podkit", "manifest.toml"),
  `[pod]\nname = "bench"\n[model]\nref = "${REF}"\n${TOOLS}`,
);
const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
const double = await startProviderDouble({ wire: "anthropic" });
const options = {
  model: double.baseUrl,
  env: { ANTHROPIC_API_KEY: "bench" },
  mode: "bypass",
  onWarning: (warning) => {
    // The line the rewind left is kept as another branch of the session, and restore says so.
    if (warning.code === "pod.other_branches") return;
    throw new Error(`unexpected warning: ${warning.code} ${warning.message}`);
  },
};
try {
  const pod = await Pod.fromManifest(loaded, options);
  for (let turn = 1; turn <= TURNS; turn++) {
    double.enqueue(writeNote(turn), answer(turn));
    const result = await pod.run(`Write the notes of turn ${turn}.`).result;
    if (result.status !== "finished") throw new Error(`turn ${turn}: ${JSON.stringify(result)}`);
  }
  const sessionId = pod.sessionId;
  await pod.close();

  const store = new FsStore({ root: sessionsRoot(workspace) });
  const started = performance.now();
  const report = await rewindSession({ store, sessionId, toTurn: TO_TURN, workspace });
  const rewindMs = performance.now() - started;
  await store.close();
  const removed = report.files.filter((file) => file.action === "delete").length;
  if (removed !== TURNS - TO_TURN)
    throw new Error(`expected ${TURNS - TO_TURN} notes removed: ${JSON.stringify(report)}`);
  await readFile(join(workspace, `notes/turn-${TO_TURN}.md`), "utf8");

  const firstAfter = double.requests.length;
  const restored = await Pod.restore(loaded, sessionId, options);
  double.enqueue(answer(TO_TURN + 1));
  const result = await restored.run("Now summarise the notes so far.").result;
  if (result.status !== "finished") throw new Error(`after the rewind: ${JSON.stringify(result)}`);
  await restored.close();

  const billed = simulatePromptCache(double.requests, "anthropic").requests[firstAfter];
  const share = billed.cacheReadTokens / billed.inputTokens;
  console.log(
    `# ${TURNS} turns rewound to turn ${TO_TURN} in ${rewindMs.toFixed(0)} ms (${report.files.length} files); first request after it: ${billed.inputTokens} input tokens, ${billed.cacheReadTokens} read, ${billed.cacheWriteTokens} written`,
  );
  console.log(`BENCH pod.rewind.cache_read_share ${share.toFixed(3)} ratio`);
} finally {
  await double.close();
  await rm(root, { recursive: true, force: true });
}
