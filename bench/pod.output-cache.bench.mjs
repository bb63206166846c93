// What a typed answer costs the prompt cache (docs/output.md, "Cache"), against the provider double.
//
// The session of pod.cache.bench.mjs (30 turns of a `lookup` call with 4 KB of output, then the
// answer; `[compaction]` with the thresholds that make it compact), run twice on the same wire: as
// it is, the answer in text, and with `[output]`, the answer a `final_answer` call. The double
// reports each request's own size as its input tokens (`measureInputTokens`), so the pod's
// estimates and thresholds work on realistic numbers.
//
// pod.cache.read_share.with_output / .without_output: the share of the session's input tokens
// `simulatePromptCache` bills as cache reads (Anthropic's rules, explicit breakpoints), over the
// pod's own requests. .with_output_delta: the difference (with − without); aim |delta| ≤ 0.01.
// .openai: the same on the OpenAI Responses wire (automatic prefix caching). .no_compaction: the
// Anthropic sessions without `[compaction]`, so that only the answers differ (a typed answer is a
// call and its result, a little longer than the text: the typed session may compact once more).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "../packages/manifest/dist/index.js";
import { Pod } from "../packages/pod/dist/index.js";
import { simulatePromptCache, startProviderDouble } from "../packages/testkit/dist/index.js";
import { lookupPackage } from "./lib/pod-bench-workspace.mjs";
import { TOOL_SESSION_RESPONSES } from "./lib/tool-session-double.mjs";

const TURNS = 30;
const OUTPUT_BYTES = 4096;
const WIRES = {
  anthropic: { ref: "anthropic/claude-sonnet-4-5", key: "ANTHROPIC_API_KEY" },
  "openai-responses": { ref: "openai/gpt-5", key: "OPENAI_API_KEY" },
};
const COMPACTION = [
  "[compaction]",
  "threshold = 11500",
  "request_threshold = 12500",
  "retained_tokens = 4000",
  "prune_protected_tokens = 4000",
  "prune_min_savings = 4096",
].join("\n");
const OUTPUT = '[output]\nschema = "answer.schema.json"\n';
const SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" }, sources: { type: "array", items: { type: "string" } } },
  required: ["answer", "sources"],
};

const [LOOKUP, TEXT_ANSWER] = TOOL_SESSION_RESPONSES.map(({ usage: _measured, ...response }) => response);
/** The typed session's answer: the same words, as the `final_answer` call. */
const TYPED_ANSWER = {
  parts: [
    {
      type: "tool_call",
      name: "final_answer",
      arguments: { answer: TEXT_ANSWER.parts[0].text, sources: ["the thing"] },
      chunkSize: 8,
    },
  ],
};

const toolPackage = lookupPackage(OUTPUT_BYTES / 30);

const isCompactRequest = (request) => request.rawBody.includes("[Compaction request from the runtime]");

function compactResponder(request) {
  if (!isCompactRequest(request)) return undefined;
  if (request.rawBody.includes("summary written")) return { parts: [{ type: "text", text: "Done." }] };
  const summary = `Goal: answer the user's questions with lookups. ${"State: answered, nothing open. ".repeat(20)}`;
  return { parts: [{ type: "tool_call", name: "write_summary", arguments: { summary } }] };
}

async function session(wire, typed, compaction = true) {
  const { ref, key } = WIRES[wire];
  const root = await mkdtemp(join(tmpdir(), "podkit-bench-output-"));
  const workspace = join(root, "project");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await writeFile(join(workspace, ".podkit", "answer.schema.json"), JSON.stringify(SCHEMA));
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    `[pod]\nname = "bench"\n[model]\nref = "${ref}"\n[tools]\nbuiltin = []\n${compaction ? COMPACTION : ""}\n${typed ? OUTPUT : ""}`,
  );
  const double = await startProviderDouble({
    wire,
    loop: true,
    measureInputTokens: true,
    respond: compactResponder,
    responses: [LOOKUP, typed ? TYPED_ANSWER : TEXT_ANSWER],
  });
  try {
    const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
    const pod = await Pod.fromManifest(loaded, {
      model: double.baseUrl,
      env: { [key]: "bench" },
      onWarning: () => {},
      toolPackages: [toolPackage],
    });
    let compactions = 0;
    for (let turn = 0; turn < TURNS; turn++) {
      const run = pod.run(`Question number ${turn}?`);
      for await (const event of run) if (event.type === "compaction_done") compactions += 1;
      const result = await run;
      if (result.status !== "finished" || (typed && result.output?.sources?.[0] !== "the thing"))
        throw new Error(`unexpected ${JSON.stringify(result)}`);
    }
    await pod.close();
    const main = double.requests.filter((request) => !isCompactRequest(request));
    return { share: simulatePromptCache(main, wire).cachedShare, requests: main.length, compactions };
  } finally {
    await double.close();
    await rm(root, { recursive: true, force: true });
  }
}

for (const [wire, compaction, suffix] of [
  ["anthropic", true, ""],
  ["openai-responses", true, ".openai"],
  ["anthropic", false, ".no_compaction"],
]) {
  const without = await session(wire, false, compaction);
  const typed = await session(wire, true, compaction);
  console.log(
    `# ${wire}${compaction ? "" : ", no compaction"}: ${without.requests} / ${typed.requests} requests, ${without.compactions} / ${typed.compactions} compaction(s) without / with [output]`,
  );
  console.log(`BENCH pod.cache.read_share.with_output${suffix} ${typed.share.toFixed(3)} ratio`);
  console.log(`BENCH pod.cache.read_share.without_output${suffix} ${without.share.toFixed(3)} ratio`);
  console.log(
    `BENCH pod.cache.read_share.with_output_delta${suffix} ${(typed.share - without.share).toFixed(4)} ratio`,
  );
}
