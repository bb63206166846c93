import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { describeSession, type Entry, type Store } from "@podkit/session-store";
import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PodUsageError } from "../src/errors.js";
import { EvalCaseError, EvalDatasetError } from "../src/eval/errors.js";
import { EVAL_ORIGIN_DOMAIN, EVAL_SCORE_DOMAIN } from "../src/eval/eval-types.js";
import { runInternalEval } from "../src/eval/internal-prompts.js";
import { readInternalEvalDataset } from "../src/eval/internal-prompts-dataset.js";
import type { MemoryExtractor, RunInternalEvalOptions } from "../src/eval/internal-prompts-types.js";
import { openWorkspaceFsStore } from "../src/pod/store-selection.js";
import { RECORDED, scriptedAgent } from "./eval-harness.js";
import {
  COMPACTION_HEADER,
  compactingModel,
  REWORDED_COMPACT_PACK,
  VAGUE_COMPACT_PACK,
  VAGUE_SUMMARY,
} from "./internal-eval-harness.js";
import { testTools, usePodWorlds, type World } from "./pod-harness.js";

// Internal prompts are evaluable (docs/evals.md, "Internal prompts"): a compaction recorded by a
// real pod against the provider double is replayed with a changed `compact_system` (a prompt pack),
// and the texts that must survive it are scored against what the recorded compaction kept.

const newWorld = usePodWorlds();
const stores: Store<Item>[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const agent = scriptedAgent(RECORDED);
/** A judge (its system prompt is `eval_judge_system`): grades a summary that quotes the first request high. */
const judge = (request: CapturedRequest): ScriptedResponse | undefined => {
  const system = (request.body.system ?? []).map((part: { text: string }) => part.text).join("");
  if (!system.includes("You grade the work")) return undefined;
  const shown = JSON.stringify(request.body.messages);
  const answer = shown.slice(shown.indexOf("Agent's answer:"), shown.indexOf("Reference answers"));
  const score = answer.includes("what does the readme say?") ? 0.9 : 0.2;
  return {
    parts: [{ type: "tool_call", name: "final_answer", arguments: { score, reason: `graded ${score}` } }],
  };
};
const respond = (request: CapturedRequest) => judge(request) ?? compactingModel(request) ?? agent(request);
/** The first turn's input and the file it read: what a good summary keeps. */
const CHECKLIST = ["what does the readme say?", "README.md"];

interface Recorded {
  world: World;
  store: Store<Item>;
  /** Two turns, then a compaction. */
  compacted: string;
  /** The same two turns, never compacted. */
  plain: string;
}

async function record(): Promise<Recorded> {
  const world = await newWorld({
    toolPackages: [testTools({ lookup: () => "value of answer: 42" })],
    double: { respond },
    manifestExtra: [
      '[[scope.allow]]\ntarget = ".."\npermission = "read"',
      "[compaction]\nthreshold = 100000\nrequest_threshold = 120000\nretained_tokens = 20",
    ].join("\n"),
  });
  const sessions: string[] = [];
  for (const compact of [true, false]) {
    const pod = await world.pod();
    await pod.run("what does the readme say?").result;
    await pod.run("and the answer again?").result;
    if (compact) expect((await pod.compact()).status).toBe("compacted");
    sessions.push(pod.sessionId as string);
  }
  const store = openWorkspaceFsStore(world.loaded.dataDir);
  stores.push(store);
  return { world, store, compacted: sessions[0] as string, plain: sessions[1] as string };
}

function options(recorded: Recorded, extra: Partial<RunInternalEvalOptions> = {}): RunInternalEvalOptions {
  const { model: _model, ...podOptions } = recorded.world.options();
  return {
    kind: "compaction",
    cases: [{ sessionId: recorded.compacted }],
    store: recorded.store,
    variant: { manifest: recorded.world.loaded, model: recorded.world.double.baseUrl },
    checklist: CHECKLIST,
    podOptions,
    ...extra,
  };
}

async function entriesOf(store: Store<Item>, sessionId: string, segmentId: string): Promise<Entry<Item>[]> {
  const entries: Entry<Item>[] = [];
  for await (const entry of store.readAll({ sessionId, segmentId })) entries.push(entry);
  return entries;
}

const compactionRequests = (world: World) =>
  world.double.requests.filter((r) => r.rawBody.includes(COMPACTION_HEADER));

describe("runInternalEval (compaction)", () => {
  it("replays a recorded compaction unchanged: the same request, difference 0, an item session with origin and scores", async () => {
    const recorded = await record();
    const before = compactionRequests(recorded.world);
    const report = await runInternalEval(options(recorded, { evalId: "same" }));
    const [item] = report.items;
    expect(item).toMatchObject({
      kind: "compaction",
      sourceSessionId: recorded.compacted,
      score: 1,
      baselineScore: 1,
      difference: 0,
      stop: "compacted",
      pass: true,
    });
    expect(item?.baselineSegmentId).not.toBeNull();
    // The compaction request is the recording's, byte for byte: the conversation is the source's.
    const after = compactionRequests(recorded.world);
    expect(after.length).toBe(before.length * 2);
    expect(after[before.length]?.rawBody).toBe(before[0]?.rawBody);

    // The item is a session: its first segment holds the source's history and eval.origin; the
    // compacted segment holds what survived and the eval.score entries.
    const overview = await describeSession(recorded.store, item?.sessionId as string);
    expect(overview.compacted).toHaveLength(1);
    const first = await entriesOf(
      recorded.store,
      item?.sessionId as string,
      overview.compacted[0]?.segmentId as string,
    );
    expect(first[1]).toMatchObject({
      kind: "extension",
      domain: EVAL_ORIGIN_DOMAIN,
      payload: { source_session: recorded.compacted, internal: "compaction", eval_id: "same" },
    });
    const head = await entriesOf(recorded.store, item?.sessionId as string, overview.head.segmentId);
    expect(head.filter((e) => e.kind === "extension" && e.domain === EVAL_SCORE_DOMAIN)).toEqual([
      expect.objectContaining({
        payload: expect.objectContaining({ name: "checklist", score: 1, baseline_score: 1 }),
      }),
    ]);
  });

  it("scores a worse compact_system below the recorded compaction and names what was lost", async () => {
    const recorded = await record();
    const pack = join(recorded.world.workspace, "vague.toml");
    await writeFile(pack, VAGUE_COMPACT_PACK);
    const report = await runInternalEval(
      options(recorded, { variant: { ...options(recorded).variant, pack }, evalId: "vague" }),
    );
    const [item] = report.items;
    expect(item?.baselineScore).toBe(1);
    expect(item?.score).toBeLessThan(1);
    expect(item?.difference).toBeLessThan(0);
    expect(item?.pass).toBe(false);
    expect(item?.scores[0]?.detail).toContain('"what does the readme say?"');
    expect(report).toMatchObject({ passed: 0, failed: 1 });
    // The changed prompt reached the model, and the model's summary is what was scored.
    expect(compactionRequests(recorded.world).at(-2)?.rawBody).toContain("in one or two plain sentences");
    const overview = await describeSession(recorded.store, item?.sessionId as string);
    const start = (await entriesOf(recorded.store, item?.sessionId as string, overview.head.segmentId))[0];
    expect(JSON.stringify(start)).toContain(VAGUE_SUMMARY);
    // A tolerance as wide as the loss lets it pass.
    const tolerant = await runInternalEval(
      options(recorded, {
        variant: { ...options(recorded).variant, pack },
        tolerance: 1,
        evalId: "tolerant",
      }),
    );
    expect(tolerant.items[0]?.pass).toBe(true);
  });

  it("a reworded compact_system that keeps the instructions keeps every text", async () => {
    const recorded = await record();
    const pack = join(recorded.world.workspace, "reworded.toml");
    await writeFile(pack, REWORDED_COMPACT_PACK);
    const report = await runInternalEval(
      options(recorded, { variant: { ...options(recorded).variant, pack } }),
    );
    expect(report.items[0]).toMatchObject({ score: 1, difference: 0, pass: true });
    expect(compactionRequests(recorded.world).at(-2)?.rawBody).toContain("Prefer bullet points over prose.");
  });

  it("compacts a session that never compacted from its end, without a baseline, and runs custom scorers", async () => {
    const recorded = await record();
    const seen: { summary: string; baseline: unknown }[] = [];
    const report = await runInternalEval(
      options(recorded, {
        cases: [{ sessionId: recorded.plain, checklist: ["and the answer again?"] }],
        scorers: [
          (item) => {
            seen.push({ summary: item.summary, baseline: item.baseline });
            return {
              name: "short",
              score: item.summary.length < 2000 ? 1 : 0,
              pass: item.summary.length < 2000,
            };
          },
        ],
      }),
    );
    expect(report.items[0]).toMatchObject({
      baselineSegmentId: null,
      baselineScore: null,
      difference: null,
      pass: true,
      scores: [
        expect.objectContaining({ name: "checklist", score: 1, baseline: null }),
        expect.objectContaining({ name: "short", score: 1 }),
      ],
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.summary).toContain("[Compacted context summary]");
    expect(seen[0]?.baseline).toBeUndefined();
  });

  it("grades the summary with a judge's rubric against the recorded summary", async () => {
    const recorded = await record();
    const pack = join(recorded.world.workspace, "vague.toml");
    await writeFile(pack, VAGUE_COMPACT_PACK);
    const rubric = "The summary quotes every request of the user word for word.";
    const report = await runInternalEval(
      options(recorded, {
        variant: { ...options(recorded).variant, pack },
        checklist: undefined,
        judges: [{ name: "keeps-requests", rubric }],
      }),
    );
    expect(report.items[0]).toMatchObject({
      score: 0.2,
      baselineScore: 0.9,
      pass: false,
      scores: [
        expect.objectContaining({
          name: "keeps-requests",
          score: 0.2,
          baseline: expect.objectContaining({ score: 0.9 }),
        }),
      ],
    });
    const graded = recorded.world.double.requests.filter((r) => r.rawBody.includes(rubric));
    expect(graded).toHaveLength(2);
    // The judge saw the item's summary as the answer, the recorded one as the reference.
    expect(graded.some((r) => r.rawBody.includes(VAGUE_SUMMARY))).toBe(true);
  });

  it("does not redo a finished item when rerun with the same eval id", async () => {
    const recorded = await record();
    const first = await runInternalEval(options(recorded, { evalId: "again" }));
    const requests = recorded.world.double.requests.length;
    const second = await runInternalEval(options(recorded, { evalId: "again" }));
    expect(recorded.world.double.requests.length).toBe(requests);
    expect(second.items[0]).toEqual({ ...first.items[0], resumed: true });
  });

  it("fails before any item runs on an unknown session or segment, or with nothing to score", async () => {
    const recorded = await record();
    const requests = recorded.world.double.requests.length;
    await expect(
      runInternalEval(options(recorded, { cases: [{ sessionId: "no-such-session" }] })),
    ).rejects.toSatisfy((error) => EvalCaseError.isInstance(error) && /no such session/.test(String(error)));
    await expect(
      runInternalEval(options(recorded, { cases: [{ sessionId: recorded.compacted, segmentId: "nope" }] })),
    ).rejects.toSatisfy((error) => EvalCaseError.isInstance(error) && /not a segment/.test(String(error)));
    await expect(runInternalEval(options(recorded, { checklist: undefined }))).rejects.toSatisfy((error) =>
      PodUsageError.isInstance(error),
    );
    expect(recorded.world.double.requests.length).toBe(requests);
  });

  it("reads an internal dataset, and names the file, line and key of a bad case", async () => {
    const recorded = await record();
    const file = join(recorded.world.workspace, "compactions.jsonl");
    await writeFile(
      file,
      `${JSON.stringify({ session: recorded.compacted, checklist: ["README.md"], name: "readme" })}\n\n`,
    );
    const cases = await readInternalEvalDataset(file);
    expect(cases).toEqual([{ sessionId: recorded.compacted, checklist: ["README.md"], name: "readme" }]);
    const report = await runInternalEval(options(recorded, { cases, checklist: undefined }));
    expect(report.items[0]).toMatchObject({ caseName: "readme", score: 1, pass: true });

    await writeFile(
      file,
      `${JSON.stringify({ session: "a" })}\n${JSON.stringify({ session: "b", checklist: "x" })}\n`,
    );
    await expect(readInternalEvalDataset(file)).rejects.toSatisfy(
      (error) =>
        EvalDatasetError.isInstance(error) &&
        /compactions\.jsonl:2 at checklist: /.test((error as Error).message),
    );
  });

  it("replays a memory extraction on a copy of the segment with the variant's memory_extract_system", async () => {
    const recorded = await record();
    const sourceEntries = async () => (await describeSession(recorded.store, recorded.plain)).head.entryCount;
    const before = await sourceEntries();
    const seen: { entries: string[]; workspace: string }[] = [];
    // A stand-in for memory's extract: it reads the item's session, and keeps the user's requests
    // only when the catalog's prompt asks for them.
    const extractor: MemoryExtractor = async (job) => {
      const overview = await describeSession(job.store, job.sessionId);
      const entries = await entriesOf(job.store, job.sessionId, overview.head.segmentId);
      seen.push({ entries: entries.map((e) => e.kind), workspace: job.workspace });
      const prompt = job.prompts.render("memory_extract_system", { language: job.language });
      const inputs = entries.flatMap((e) => (e.kind === "user_input" ? [e.text] : []));
      return { requests: prompt.includes("standing requests") ? inputs : [] };
    };
    const extract = (extra: Partial<RunInternalEvalOptions>) =>
      runInternalEval(
        options(recorded, {
          kind: "memory_extract",
          cases: [{ sessionId: recorded.plain }],
          checklist: ["what does the readme say?"],
          extractor,
          ...extra,
        }),
      );
    const same = await extract({ evalId: "extract-same" });
    expect(same.items[0]).toMatchObject({
      kind: "memory_extract",
      stop: "extracted",
      score: 1,
      baselineScore: null,
      pass: true,
    });
    // The item's session: eval.origin, then a copy of the source's entries; the source is untouched.
    expect(seen[0]?.entries.slice(0, 4)).toEqual(["segment_start", "extension", "invoke", "user_input"]);
    expect(await sourceEntries()).toBe(before);
    const overview = await describeSession(recorded.store, same.items[0]?.sessionId as string);
    const head = await entriesOf(recorded.store, same.items[0]?.sessionId as string, overview.head.segmentId);
    expect(head[1]).toMatchObject({ domain: EVAL_ORIGIN_DOMAIN, payload: { internal: "memory_extract" } });
    expect(head.at(-1)).toMatchObject({
      domain: EVAL_SCORE_DOMAIN,
      payload: { name: "checklist", score: 1 },
    });

    const pack = join(recorded.world.workspace, "no-requests.toml");
    await writeFile(pack, '[prompt]\nmemory_extract_system = "Extract decisions only, in {{ language }}."\n');
    const worse = await extract({ variant: { ...options(recorded).variant, pack }, evalId: "extract-worse" });
    expect(worse.items[0]).toMatchObject({ score: 0, pass: false });
    expect(worse.items[0]?.scores[0]?.detail).toContain('lost: "what does the readme say?"');

    await expect(extract({ extractor: undefined })).rejects.toSatisfy((error) =>
      PodUsageError.isInstance(error),
    );
  });
});
