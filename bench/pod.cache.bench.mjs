// What a long pod session would be billed, and what compaction costs, against the provider double.
//
// The session: 30 turns of the tool-session script (bench/lib/tool-session-double.mjs: a `lookup`
// call, then an answer), each tool result carrying 4 KB of output, `[compaction]` on with thresholds
// that make the session compact once. The double reports each request's own size as its input tokens
// (`measureInputTokens`), so the pod's estimates and thresholds work on realistic numbers; the
// compaction worker's requests are answered by routing on their tools (write_summary, then done).
//
// pod.cache.read_share: the share of the session's input tokens `simulatePromptCache` bills as cache
// reads under Anthropic's rules (explicit breakpoints), over the pod's own requests. Aim ≥ 0.85.
// pod.cache.read_share.openai: the same session on the OpenAI Responses wire, automatic prefix caching.
// .no_prune: the same sessions with prune off (prune_protected_tokens beyond the session), to show what
// prune costs or saves; .with_compaction_worker: the share over every request, the worker's included;
// pod.cache.input_tokens[.no_prune]: total input tokens sent (what prune saves).
// pod.compaction.wall_ms: wall time of the one compaction (split, overview, worker against the double,
// new segment written), median of 5 sessions.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import { simulatePromptCache, startProviderDouble } from "../packages/testkit/dist/index.js";
import { lookupPackage } from "./lib/pod-bench-workspace.mjs";
import { TOOL_SESSION_RESPONSES } from "./lib/tool-session-double.mjs";

const TURNS = 30;
const ROUNDS = 5;
const OUTPUT_BYTES = 4096;
const WIRES = {
  anthropic: { ref: "anthropic/claude-sonnet-4-5", key: "ANTHROPIC_API_KEY" },
  "openai-responses": { ref: "openai/gpt-5", key: "OPENAI_API_KEY" },
};
const COMPACTION = (prune) =>
  [
    "[compaction]",
    "threshold = 11500",
    "request_threshold = 12500",
    "retained_tokens = 4000",
    `prune_protected_tokens = ${prune ? 4000 : 10_000_000}`,
    "prune_min_savings = 4096",
  ].join("\n");

const toolPackage = lookupPackage(OUTPUT_BYTES / 30);

/** A compaction request: the pod's conversation with the builtin compaction instruction appended. */
const isCompactRequest = (request) => request.rawBody.includes("[Compaction request from the runtime]");

/** The compaction worker writes its summary, then finishes. */
function compactResponder(request) {
  if (!isCompactRequest(request)) return undefined;
  if (request.rawBody.includes("summary written")) return { parts: [{ type: "text", text: "Done." }] };
  const summary = `Goal: answer the user's questions with lookups. ${"State: answered, nothing open. ".repeat(20)}`;
  return { parts: [{ type: "tool_call", name: "write_summary", arguments: { summary } }] };
}

async function session(wire, prune) {
  const { ref, key } = WIRES[wire];
  const root = await mkdtemp(join(tmpdir(), "podkit-bench-cache-"));
  const workspace = join(root, "project");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    `[pod]\nname = "bench"\n[model]\nref = "${ref}"\n[tools]\nbuiltin = []\n${COMPACTION(prune)}\n`,
  );
  const double = await startProviderDouble({
    wire,
    loop: true,
    measureInputTokens: true,
    respond: compactResponder,
    responses: TOOL_SESSION_RESPONSES.map(({ usage: _measured, ...response }) => response),
  });
  try {
    const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
    const pod = await Pod.fromManifest(loaded, {
      model: double.baseUrl,
      env: { [key]: "bench" },
      onWarning: () => {},
      toolPackages: [toolPackage],
    });
    const compactions = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const run = pod.run(`Question number ${turn}?`);
      for await (const event of run) if (event.type === "compaction_done") compactions.push(event.durationMs);
      const result = await run;
      if (result.status !== "finished") throw new Error(`unexpected ${JSON.stringify(result)}`);
    }
    await pod.close();
    const main = double.requests.filter((request) => !isCompactRequest(request));
    const report = simulatePromptCache(main, wire);
    return {
      share: report.cachedShare,
      all: simulatePromptCache(double.requests, wire).cachedShare,
      input: report.totals.inputTokens,
      compactions,
    };
  } finally {
    await double.close();
    await rm(root, { recursive: true, force: true });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

for (const [wire, suffix] of [
  ["anthropic", ""],
  ["openai-responses", ".openai"],
]) {
  for (const prune of [true, false]) {
    const name = `${suffix}${prune ? "" : ".no_prune"}`;
    const result = await session(wire, prune);
    console.log(`# ${wire}${prune ? "" : ", no prune"}: ${result.compactions.length} compaction(s)`);
    console.log(`BENCH pod.cache.compactions${name} ${result.compactions.length} count`);
    console.log(`BENCH pod.cache.read_share${name} ${result.share.toFixed(3)} ratio`);
    console.log(`BENCH pod.cache.read_share${name}.with_compaction_worker ${result.all.toFixed(3)} ratio`);
    console.log(`BENCH pod.cache.input_tokens${name} ${result.input} tokens`);
  }
}

const walls = [];
for (let round = 0; round < ROUNDS; round++) walls.push(...(await session("anthropic", true)).compactions);
console.log(`BENCH pod.compaction.wall_ms ${median(walls).toFixed(0)} ms`);
