import type { Item } from "@podkit/llm-worker";
import { readSessionView, type Store } from "@podkit/session-store";
import {
  type CapturedRequest,
  type ProviderDouble,
  type ScriptedResponse,
  startProviderDouble,
} from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { EvalJudgeError } from "../src/eval/errors.js";
import { EVAL_SCORE_DOMAIN, type RunEvalOptions } from "../src/eval/eval-types.js";
import { runEval } from "../src/eval/run-eval.js";
import { openWorkspaceFsStore } from "../src/pod/store-selection.js";
import { RECORDED, scriptedAgent, WORSE } from "./eval-harness.js";
import { writeFiles } from "./helpers.js";
import { testTools, usePodWorlds, type World } from "./pod-harness.js";

// Judge scorers (docs/evals.md, "Judge scorers"): a model grades each item and its recorded
// baseline by a rubric from the prompt catalog, answering through the typed-answer tool. The judge
// here is a second provider double whose requests the tests read.

const newWorld = usePodWorlds();
const stores: Store<Item>[] = [];
const doubles: ProviderDouble[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const double of doubles.splice(0)) await double.close();
});

const JUDGE_MODEL = "anthropic/claude-haiku-4-5";
/** A sentence of the builtin `eval_judge_rubric`. */
const BUILTIN_RUBRIC =
  "They follow from what its tools returned and claim nothing the conversation does not support.";

interface Recorded {
  world: World;
  store: Store<Item>;
  session: string;
}

/** One recorded session of two turns: read_file, lookup, an answer; then a plain answer. */
async function record(): Promise<Recorded> {
  const lookup = testTools({ lookup: (args) => `value of ${String(args.key)}: 42` });
  const world = await newWorld({
    toolPackages: [lookup],
    double: { respond: scriptedAgent(RECORDED) },
    manifestExtra: '[[scope.allow]]\ntarget = ".."\npermission = "read"',
  });
  const pod = await world.pod();
  await pod.run("what does the readme say?").result;
  await pod.run("and the answer again?").result;
  const store = openWorkspaceFsStore(world.loaded.dataDir);
  stores.push(store);
  return { world, store, session: pod.sessionId as string };
}

/** A judge double: `grade` answers each request (default: a `final_answer` call with 0.9). */
async function judgeDouble(
  grade: (request: CapturedRequest) => ScriptedResponse = () => answer(0.9, "Correct and grounded."),
): Promise<ProviderDouble> {
  const double = await startProviderDouble({ wire: "anthropic", respond: grade });
  doubles.push(double);
  return double;
}

const answer = (score: unknown, reason: string): ScriptedResponse => ({
  parts: [{ type: "tool_call", name: "final_answer", arguments: { score, reason } }],
  usage: { inputTokens: 500, outputTokens: 20 },
});

function evalOptions(recorded: Recorded, extra: Partial<RunEvalOptions> = {}): RunEvalOptions {
  const { model: _model, ...podOptions } = recorded.world.options();
  return {
    cases: [{ sessionId: recorded.session }],
    store: recorded.store,
    variant: { manifest: recorded.world.loaded, model: recorded.world.double.baseUrl },
    podOptions,
    ...extra,
  };
}

/** An Anthropic content or system block, as far as these tests read it. */
type Block = { text?: string };

/** The system prompt of an Anthropic request, as one string. */
function systemOf(request: CapturedRequest | undefined): string {
  const system: string | Block[] | undefined = request?.body.system;
  return typeof system === "string" ? system : (system ?? []).map((block) => block.text ?? "").join("");
}

/** The text of a request's first (user) message. */
function inputOf(request: CapturedRequest | undefined): string {
  const content: string | Block[] | undefined = request?.body.messages?.[0]?.content;
  return typeof content === "string" ? content : (content ?? []).map((block) => block.text ?? "").join("");
}

describe("judge scorers", () => {
  it("grade the item and its baseline through the typed-answer tool by the catalog's rubric, with the same request for the same item", async () => {
    const recorded = await record();
    const judge = await judgeDouble();
    const report = await runEval(
      evalOptions(recorded, {
        judges: [{ model: JUDGE_MODEL, baseUrl: judge.baseUrl }],
        evalId: "judged",
      }),
    );
    const [item] = report.items;
    expect(item?.pass).toBe(true);
    expect(item?.scores.find((s) => s.name === "judge")).toMatchObject({
      score: 0.9,
      pass: true,
      detail: "Correct and grounded.",
      baseline: { score: 0.9, pass: true },
    });
    // One request for the item, one for its baseline: each to the judge's model, at temperature 0,
    // with the rubric in the system prompt and the answer tool's schema.
    expect(judge.requests).toHaveLength(2);
    const [first, second] = judge.requests;
    expect(first?.body).toMatchObject({ model: "claude-haiku-4-5", temperature: 0 });
    expect(systemOf(first)).toContain(BUILTIN_RUBRIC);
    expect(systemOf(first)).toContain("Call final_answer once");
    expect(first?.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["final_answer"]);
    expect(first?.body.tools[0].input_schema).toMatchObject({
      properties: { score: { type: "number", minimum: 0, maximum: 1 }, reason: { type: "string" } },
    });
    // The item as the judge sees it: the inputs, the calls with their results, the answers, and
    // the recording's answers as the reference.
    const shown = inputOf(first);
    for (const fragment of [
      "User: what does the readme say?",
      'Tool call read_file {"path":"README.md"} → README.md: lines 1-1 of 1',
      'Tool call lookup {"key":"answer"} → value of answer: 42',
      "Agent's answer: It says readme; the answer is 42.",
      "## Turn 2",
      "Agent's answer: Still 42.",
      "## Reference answers (recorded)",
      "Turn 2: Still 42.",
    ]) {
      expect(shown).toContain(fragment);
    }
    // The unchanged variant replays what was recorded: the item's request is its baseline's, byte for byte.
    expect(first?.rawBody).toBe(second?.rawBody);
    // The judge's score is a log entry of the item like every other.
    const view = await readSessionView(recorded.store, item?.sessionId as string);
    const entries = [];
    for await (const entry of recorded.store.readAll({
      sessionId: item?.sessionId as string,
      segmentId: view.head.segmentId,
    }))
      entries.push(entry);
    const judged = entries.find(
      (e) =>
        e.kind === "extension" &&
        e.domain === EVAL_SCORE_DOMAIN &&
        (e.payload as { name: string }).name === "judge",
    );
    expect(judged).toMatchObject({
      payload: { score: 0.9, pass: true, detail: "Correct and grounded.", baseline_score: 0.9 },
    });
    expect(view.segments[0]?.eval?.scores.map((s) => s.name)).toEqual(["answer", "trajectory", "judge"]);

    // Another eval of the same case sends the judge the same bytes: replay against a double is reproducible.
    await runEval(
      evalOptions(recorded, { judges: [{ model: JUDGE_MODEL, baseUrl: judge.baseUrl }], evalId: "again" }),
    );
    expect(judge.requests.map((r) => r.rawBody)).toEqual([
      first?.rawBody,
      first?.rawBody,
      first?.rawBody,
      first?.rawBody,
    ]);
  });

  it("take the rubric from a workspace catalog layer, or from the prompt file a scorer names", async () => {
    const recorded = await record();
    await writeFiles(recorded.world.workspace, {
      ".podkit/prompts.toml": '[prompt]\neval_judge_rubric = "Only brevity counts: one sentence at most."\n',
      ".podkit/prompts/rubrics/tone.md": "The answers are polite{{ ' and calm' }}.\n",
    });
    const judge = await judgeDouble();
    const report = await runEval(
      evalOptions(recorded, {
        judges: [
          { model: JUDGE_MODEL, baseUrl: judge.baseUrl },
          { name: "tone", rubric: "$workspace/rubrics/tone", model: JUDGE_MODEL, baseUrl: judge.baseUrl },
        ],
      }),
    );
    expect(report.items[0]?.scores.map((s) => s.name)).toEqual(["answer", "trajectory", "judge", "tone"]);
    const systems = judge.requests.map(systemOf);
    expect(systems).toHaveLength(4);
    const byDefault = systems.filter((s) => s.includes("Only brevity counts: one sentence at most."));
    const byTone = systems.filter((s) => s.includes("The answers are polite and calm."));
    expect([byDefault.length, byTone.length]).toEqual([2, 2]);
    for (const system of systems) expect(system).not.toContain(BUILTIN_RUBRIC);
  });

  it("regress a case the judge grades lower than its recording; the variant's pack does not change the judge", async () => {
    const recorded = await record();
    await writeFiles(recorded.world.workspace, {
      "packs/judge-too.toml": '[prompt]\neval_judge_rubric = "A rubric the variant must not bring."\n',
    });
    const judge = await judgeDouble((request) =>
      inputOf(request).includes("The answer is 7.") ? answer(0.2, "Wrong number.") : answer(0.9, "Right."),
    );
    const worse = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(WORSE) });
    doubles.push(worse);
    const report = await runEval(
      evalOptions(recorded, {
        variant: { manifest: recorded.world.loaded, model: worse.baseUrl, pack: "packs/judge-too.toml" },
        judges: [{ model: JUDGE_MODEL, baseUrl: judge.baseUrl }],
      }),
    );
    const [item] = report.items;
    expect(item?.scores.find((s) => s.name === "judge")).toMatchObject({
      score: 0.2,
      pass: false,
      detail: "Wrong number.",
      baseline: { score: 0.9 },
    });
    for (const request of judge.requests) expect(systemOf(request)).toContain(BUILTIN_RUBRIC);
  });

  it("repair a grade that breaks the schema, and fail the item (not score it 0) when the judge never grades", async () => {
    const recorded = await record();
    let calls = 0;
    const repaired = await judgeDouble(() =>
      calls++ === 0 ? answer(7, "Out of range.") : answer(1, "Fine."),
    );
    const report = await runEval(
      evalOptions(recorded, { judges: [{ model: JUDGE_MODEL, baseUrl: repaired.baseUrl }], concurrency: 1 }),
    );
    expect(report.items[0]?.scores.find((s) => s.name === "judge")?.score).toBe(1);
    // The repair went back to the judge as the error result of its call.
    expect(JSON.stringify(repaired.requests[1]?.body.messages)).toContain("/score");
    expect(repaired.requests).toHaveLength(3);

    const silent = await judgeDouble(() => ({ parts: [{ type: "text", text: "I would rather not say." }] }));
    const failed = await runEval(
      evalOptions(recorded, { judges: [{ model: JUDGE_MODEL, baseUrl: silent.baseUrl }] }),
    );
    const [item] = failed.items;
    expect(item?.pass).toBe(false);
    expect(item?.error).toMatch(/^scorer judge failed: judge judge: could not grade: /);
    // The replay itself matched its recording: only the judge failed, and that fails the item.
    expect(item?.difference).toBe(0);
    expect(item?.scores.find((s) => s.name === "answer")?.pass).toBe(true);
    // Its first request and two repairs, for the item and for the baseline.
    expect(silent.requests).toHaveLength(6);
  });

  it("refuse a judge without its API key, or with a rubric file that does not exist, before any item runs", async () => {
    const recorded = await record();
    const before = recorded.world.double.requests.length;
    const { model: _model, ...podOptions } = recorded.world.options({
      env: { ANTHROPIC_API_KEY: "test-key" },
    });
    const keyless = await runEval(
      evalOptions(recorded, { judges: [{ model: "openai/gpt-5" }], podOptions }),
    ).catch((e: unknown) => e);
    expect((keyless as Error).message).toContain("set the environment variable OPENAI_API_KEY");
    const missing = await runEval(
      evalOptions(recorded, {
        judges: [{ rubric: "$workspace/rubrics/none", model: JUDGE_MODEL, baseUrl: "http://127.0.0.1:9" }],
      }),
    ).catch((e: unknown) => e);
    expect((missing as Error).message).toContain("$workspace/rubrics/none");
    expect(recorded.world.double.requests.length).toBe(before);
    expect(EvalJudgeError.isInstance(keyless)).toBe(false);
  });
});
