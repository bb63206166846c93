// Benchmarks of @podkit/memory over a realistic memory tree. Requires a built workspace.
//   BENCH memory.lint.5k_ms        the pure linter over 5,000 records held in memory (median)
//   BENCH memory.lint.5k_load_ms   load the trees from disk + lint (`podkit memory lint`)
//   BENCH memory.query.5k_ms       one memory_query call over 5,000 records as a pod makes it: the
//                                  tool `attachMemory` registers, called again and again (median; ~1% hit)
//   BENCH memory.query.5k_first_ms the first such call of a pod (the tree not yet loaded)
//   BENCH memory.query.max_loop_gap_ms the longest event-loop stall during those calls
//   BENCH memory.extract.wall_ms   one extract against the provider double (slice of a 40-entry turn)
//   BENCH memory.consolidate.wall_ms one consolidation of 8 staging files over the 5,000-record tree,
//                                  the scripted worker making one write (lock, input, worker, commit)
//   BENCH memory.consolidate.max_loop_gap_ms the longest event-loop stall during that consolidation
// The tree: 2,000 decisions (1 in 10 replaced, chains of two), 1,500 requests, 1,499 knowledge
// entries and the summary; bodies of 400–1,600 characters with #slug references, 1–12 sources.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createModelAdapter } from "../packages/llm-worker/dist/index.js";
import { loadManifest } from "../packages/manifest/dist/index.js";
import {
  attachMemory,
  lintMemory,
  runMemoryConsolidation,
  runMemoryExtract,
} from "../packages/memory/dist/index.js";
import { joinRecord } from "../packages/memory/dist/records/frontmatter.js";
import { memoryPaths, recordLabel } from "../packages/memory/dist/records/layout.js";
import { loadMemoryFiles } from "../packages/memory/dist/store/load-memory-files.js";
import { loadPodResources } from "../packages/pod/dist/index.js";
import { FsStore, SessionLog, sessionsRoot } from "../packages/session-store/dist/index.js";
import { startProviderDouble } from "../packages/testkit/dist/index.js";
import { writeFileAtomicForBench } from "./lib/memory-tree.mjs";

const root = await mkdtemp(join(tmpdir(), "podkit-bench-memory-"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = async (fn) => {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
};
const print = (name, value, unit = "ms") => console.log(`BENCH ${name} ${value.toFixed(2)} ${unit}`);
/** Runs `fn` and returns the longest event-loop delay seen meanwhile (ms): what a streaming turn would stall. */
const maxLoopGap = async (fn) => {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  try {
    await fn();
  } finally {
    histogram.disable();
  }
  return histogram.max / 1e6;
};

try {
  const workspace = join(root, "ws");
  const files = await writeFileAtomicForBench(workspace, { joinRecord, recordLabel, memoryPaths });
  if (files.length !== 5000) throw new Error(`expected 5000 records, wrote ${files.length}`);

  const loaded = await loadMemoryFiles(memoryPaths(workspace));
  const report = lintMemory(loaded);
  if (report.errors.length > 0)
    throw new Error(`the bench tree must lint clean: ${report.errors[0].message}`);
  const lintTimes = [];
  for (let i = 0; i < 7; i++) lintTimes.push(await time(() => lintMemory(loaded)));
  print("memory.lint.5k_ms", median(lintTimes));
  const loadTimes = [];
  for (let i = 0; i < 3; i++)
    loadTimes.push(await time(async () => lintMemory(await loadMemoryFiles(memoryPaths(workspace)))));
  print("memory.lint.5k_load_ms", median(loadTimes));

  // The memory_query tool exactly as a pod gets it from attachMemory.
  const registered = [];
  attachMemory({
    manifest: {
      workspace,
      manifest: {
        pod: { name: "bench" },
        worker: { language: "English" },
        memory: { tools: true, extract_threshold: 1 },
      },
    },
    catalog: { render: (key) => key },
    modelAdapter: undefined,
    addContextSection: () => {},
    addAfterTurnJob: () => {},
    registerTool: (tool) => registered.push(tool),
  });
  const query = registered.find((t) => t.name === "memory_query");
  const signal = new AbortController().signal;
  const call = async () => {
    const out = await query.execute({ query: "needle-topic" }, { signal, callId: "b" });
    if (!out.summary.includes("match")) throw new Error(`query found nothing: ${out.summary}`);
  };
  const queryTimes = [];
  const queryGap = await maxLoopGap(async () => {
    print("memory.query.5k_first_ms", await time(call));
    for (let i = 0; i < 9; i++) queryTimes.push(await time(call));
  });
  print("memory.query.5k_ms", median(queryTimes));
  print("memory.query.max_loop_gap_ms", queryGap);

  // Extract and consolidation against the provider double (real HTTP, real adapter).
  const double = await startProviderDouble({ wire: "anthropic" });
  try {
    const model = createModelAdapter("anthropic/claude-sonnet-4-5", { baseUrl: double.baseUrl, apiKey: "k" });
    // The real catalog: the consolidation input (every record in full) is rendered through it.
    await writeFile(
      join(root, "manifest.toml"),
      '[pod]\nname = "bench"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n',
    );
    const loaded = await loadManifest({
      file: join(root, "manifest.toml"),
      env: { cwd: workspace, home: root, env: {} },
    });
    const { catalog: prompts } = await loadPodResources(loaded, { onWarning: () => {} });
    const job = { workspace, model, prompts, language: "English", retry: { maxAttempts: 1 } };
    const sessions = new FsStore({ root: sessionsRoot(workspace) });
    const extractTimes = [];
    const extracted = {
      decisions: [{ topic: "bench topic", decision: "Keep the bench small", reason: "CPU is shared" }],
      discussions: [],
      attempts: [],
      requests: [],
    };
    for (let i = 0; i < 8; i++) {
      const log = await SessionLog.create(sessions, { systemPrompt: "s", config: {} });
      const entries = [
        { kind: "invoke", trigger: "user" },
        { kind: "user_input", text: `question ${i} `.repeat(40) },
      ];
      for (let t = 0; t < 18; t++) {
        entries.push({
          kind: "assistant_item",
          item: { type: "tool_call", call_id: `c${t}`, name: "read_file", arguments: "{}" },
        });
        entries.push({
          kind: "tool_result",
          item: {
            type: "tool_result",
            call_id: `c${t}`,
            summary: "read 40 lines",
            content: "x".repeat(2000),
          },
        });
      }
      entries.push(
        { kind: "turn_end", turn: 1 },
        { kind: "run_completed", result: "finished", interrupted: false },
      );
      await log.appendMany(entries);
      double.enqueue(
        {
          parts: [{ type: "tool_call", name: "write_extracted", arguments: extracted }],
          finishReason: "tool_calls",
        },
        { parts: [{ type: "text", text: "ok" }] },
      );
      extractTimes.push(
        await time(() => runMemoryExtract({ ...job, sessions, sessionId: log.state.sessionId })),
      );
    }
    print("memory.extract.wall_ms", median(extractTimes.slice(1)));

    const write = {
      kind: "request",
      slug: "bench-request-new",
      content: "---\n---\n\nKeep the bench small.\n",
      reason: "bench",
      staged: ["s1-d1"],
    };
    double.enqueue(
      { parts: [{ type: "tool_call", name: "memory_write", arguments: write }], finishReason: "tool_calls" },
      { parts: [{ type: "text", text: "done" }] },
      { parts: [{ type: "text", text: "nothing to tidy" }] },
    );
    let consolidateMs = 0;
    const consolidateGap = await maxLoopGap(async () => {
      consolidateMs = await time(async () => {
        const result = await runMemoryConsolidation({ ...job, force: true });
        if (result.status !== "consolidated" || result.changes.length !== 1)
          throw new Error(`consolidation: ${result.status}`);
      });
    });
    print("memory.consolidate.wall_ms", consolidateMs);
    print("memory.consolidate.max_loop_gap_ms", consolidateGap);
    const inputBytes = Buffer.byteLength(double.requests.at(-3).rawBody);
    console.log(
      `# consolidation request body: ${(inputBytes / 1e6).toFixed(2)} MB (full decisions and requests)`,
    );
    await sessions.close();
  } finally {
    await double.close();
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
