import type { Item } from "@podkit/llm-worker";
import { type Entry, readSessionView, type Store } from "@podkit/session-store";
import { startProviderDouble } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { EvalCaseError } from "../src/eval/errors.js";
import { EVAL_ORIGIN_DOMAIN, EVAL_SCORE_DOMAIN, type RunEvalOptions } from "../src/eval/eval-types.js";
import { runEval } from "../src/eval/run-eval.js";
import { openWorkspaceFsStore } from "../src/pod/store-selection.js";
import { DIVERGING, RECORDED, scriptedAgent, WORSE } from "./eval-harness.js";
import { writeFiles } from "./helpers.js";
import { testTools, usePodWorlds, type World } from "./pod-harness.js";

// Evals by replay (docs/evals.md): sessions recorded by real pods against the provider double are
// replayed through a variant — the same double (unchanged), a worse one, one that calls what was
// never recorded — with recorded tool results, each item a session of its own.

const newWorld = usePodWorlds();
const stores: Store<Item>[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** The workspace readable (relative to the manifest's directory, `.podkit/`). */
const READ_WORKSPACE = '[[scope.allow]]\ntarget = ".."\npermission = "read"';

interface Recorded {
  world: World;
  store: Store<Item>;
  /** Executions of the `lookup` test tool. */
  lookups: string[];
  /** Session A: two turns (read_file, lookup, answer; then a plain answer). Session B: grep, answer. */
  a: string;
  b: string;
  /** Requests the recording made. */
  requests: number;
}

async function record(): Promise<Recorded> {
  const lookups: string[] = [];
  const lookup = testTools({ lookup: (args) => `value of ${String(args.key)}: 42` }, lookups);
  const world = await newWorld({
    toolPackages: [lookup],
    double: { respond: scriptedAgent(RECORDED) },
    manifestExtra: READ_WORKSPACE,
  });
  const first = await world.pod();
  expect((await first.run("what does the readme say?").result).status).toBe("finished");
  await first.run("and the answer again?").result;
  const second = await world.pod();
  await second.run("grep for readme").result;
  const store = openWorkspaceFsStore(world.loaded.dataDir);
  stores.push(store);
  expect(lookups).toEqual(["lookup"]);
  const read = world.double.requests[1]?.rawBody ?? "";
  expect(read).toContain("README.md: lines 1-1 of 1");
  return {
    world,
    store,
    lookups,
    a: first.sessionId as string,
    b: second.sessionId as string,
    requests: world.double.requests.length,
  };
}

function evalOptions(recorded: Recorded, extra: Partial<RunEvalOptions> = {}): RunEvalOptions {
  const { model: _model, ...podOptions } = recorded.world.options();
  return {
    cases: [{ sessionId: recorded.a }, { sessionId: recorded.b }],
    store: recorded.store,
    variant: { manifest: recorded.world.loaded, model: recorded.world.double.baseUrl },
    podOptions,
    ...extra,
  };
}

async function entriesOf(store: Store<Item>, sessionId: string): Promise<Entry<Item>[]> {
  const view = await readSessionView(store, sessionId);
  const entries: Entry<Item>[] = [];
  for await (const entry of store.readAll({ sessionId, segmentId: view.head.segmentId })) entries.push(entry);
  return entries;
}

describe("runEval over recorded sessions", () => {
  it("replays an unchanged variant offline: score difference 0, no divergence, the same request prefix, tools never run", async () => {
    const recorded = await record();
    const report = await runEval(evalOptions(recorded));
    expect(report.failed).toBe(0);
    expect(report.passed).toBe(2);
    for (const item of report.items) {
      expect(item.difference).toBe(0);
      expect(item.divergences).toEqual([]);
      expect(item.stop).toBe("finished");
      expect(item.item).toEqual(item.baseline);
    }
    expect(report.items[0]?.item.tools).toEqual(["read_file", "lookup"]);
    expect(report.items[1]?.item.tools).toEqual(["grep"]);
    // Replayed results: the real lookup tool did not run again.
    expect(recorded.lookups).toEqual(["lookup"]);
    // The double answered as many requests as the recording made, each with the recording's
    // system prompt and tool list byte for byte.
    const requests = recorded.world.double.requests;
    expect(requests.length).toBe(recorded.requests * 2);
    const prefix = (i: number) =>
      JSON.stringify([requests[i]?.body.system, requests[i]?.body.tools, requests[i]?.body.tool_choice]);
    for (let i = recorded.requests; i < requests.length; i++) expect(prefix(i)).toBe(prefix(0));
  });

  it("writes each item as a session that starts with its eval.origin and ends with its eval.score entries", async () => {
    const recorded = await record();
    const report = await runEval(evalOptions(recorded, { evalId: "origin-check" }));
    const [item] = report.items;
    if (item === undefined) throw new Error("no item");
    expect(item.sessionId).not.toBe(recorded.a);
    const view = await readSessionView(recorded.store, item.sessionId);
    expect(view.segments[0]?.turns.map((t) => [t.input, t.answer])).toEqual([
      ["what does the readme say?", "It says readme; the answer is 42."],
      ["and the answer again?", "Still 42."],
    ]);
    const entries = await entriesOf(recorded.store, item.sessionId);
    expect(entries[0]?.kind).toBe("segment_start");
    expect(entries[1]).toMatchObject({
      kind: "extension",
      domain: EVAL_ORIGIN_DOMAIN,
      payload: {
        source_session: recorded.a,
        from_turn: 1,
        to_turn: 2,
        eval_id: "origin-check",
        variant: { model: recorded.world.double.baseUrl },
      },
    });
    const scores = entries.filter((e) => e.kind === "extension" && e.domain === EVAL_SCORE_DOMAIN);
    expect(scores.map((e) => (e.kind === "extension" ? (e.payload as { name: string }).name : ""))).toEqual([
      "answer",
      "trajectory",
    ]);
    // The scores come after the item's last turn.
    expect(entries.indexOf(scores[0] as Entry<Item>)).toBeGreaterThan(
      entries.findLastIndex((e) => e.kind === "turn_end"),
    );
  });

  it("a worse model regresses the case it changes, and only that one", async () => {
    const recorded = await record();
    const worse = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(WORSE) });
    try {
      const report = await runEval(
        evalOptions(recorded, { variant: { manifest: recorded.world.loaded, model: worse.baseUrl } }),
      );
      const [a, b] = report.items;
      expect(a?.pass).toBe(false);
      expect(a?.difference).toBeLessThan(0);
      // Turn 1's answer is wrong, turn 2's is still right.
      expect(a?.scores.find((s) => s.name === "answer")).toMatchObject({ score: 0.5, pass: false });
      expect(a?.scores.find((s) => s.name === "trajectory")?.pass).toBe(false);
      expect(a?.divergences).toEqual([{ turn: 1, tool: "grep", arguments: '{"pattern":"answer"}' }]);
      expect(b?.pass).toBe(true);
      expect(b?.difference).toBe(0);
      expect([report.passed, report.failed]).toEqual([1, 1]);
    } finally {
      await worse.close();
    }
  });

  it("reports a call never recorded as a divergence with an error result to the model, not an exception", async () => {
    const recorded = await record();
    const diverging = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(DIVERGING) });
    try {
      const report = await runEval(
        evalOptions(recorded, {
          cases: [{ sessionId: recorded.a, toTurn: 1 }],
          variant: { manifest: recorded.world.loaded, model: diverging.baseUrl },
        }),
      );
      const [item] = report.items;
      expect(item?.stop).toBe("finished");
      expect(item?.divergences).toEqual([{ turn: 1, tool: "read_file", arguments: '{"path":"OTHER.md"}' }]);
      const entries = await entriesOf(recorded.store, item?.sessionId as string);
      const results = entries.flatMap((e) => (e.kind === "tool_result" ? [e.item] : []));
      expect(results[0]).toMatchObject({ is_error: true });
      expect(JSON.stringify(results[0])).toContain("was not recorded");
      // The recorded calls still got their recorded results.
      expect(results[1]).toMatchObject({ summary: expect.stringContaining("README.md") });
      expect(item?.scores.find((s) => s.name === "answer")?.pass).toBe(true);
    } finally {
      await diverging.close();
    }
  });

  it("replays a turn range on top of the source's history before it", async () => {
    const recorded = await record();
    const report = await runEval(evalOptions(recorded, { cases: [{ sessionId: recorded.a, fromTurn: 2 }] }));
    const [item] = report.items;
    expect(item).toMatchObject({ difference: 0, fromTurn: 2, toTurn: 2, pass: true });
    const entries = await entriesOf(recorded.store, item?.sessionId as string);
    const start = entries[0];
    if (start?.kind !== "segment_start") throw new Error("no segment_start");
    // Turn 1's input, calls, results and answer are the item's starting history.
    expect(start.history.length).toBe(6);
    expect(entries[1]).toMatchObject({ domain: EVAL_ORIGIN_DOMAIN, payload: { from_turn: 2, to_turn: 2 } });
    const last = recorded.world.double.requests.at(-1);
    expect(JSON.stringify(last?.body.messages[0])).toContain("what does the readme say?");
  });

  it("stub tools return their fixed result; input cases are scored against their expected answer", async () => {
    const recorded = await record();
    const report = await runEval(
      evalOptions(recorded, {
        cases: [
          { sessionId: recorded.a, toTurn: 1 },
          { input: "say hello", expected: "Hello." },
          { input: ["say hello"], expected: "Goodbye." },
        ],
        tools: { lookup: "stub" },
        stubs: { lookup: { summary: "value of answer: 42" } },
      }),
    );
    const [stubbed, hello, goodbye] = report.items;
    const entries = await entriesOf(recorded.store, stubbed?.sessionId as string);
    const results = entries.flatMap((e) => (e.kind === "tool_result" ? [e.item] : []));
    expect(results[1]).toMatchObject({ summary: "value of answer: 42" });
    expect(recorded.lookups).toEqual(["lookup"]);
    expect(hello).toMatchObject({ pass: true, baselineScore: null, sourceSessionId: null });
    expect(goodbye?.pass).toBe(false);
    expect(goodbye?.scores.find((s) => s.name === "answer")?.detail).toContain('"Goodbye."');
  });

  it("live tools run for real in a scratch copy of the workspace", async () => {
    const recorded = await record();
    await writeFiles(recorded.world.workspace, { "README.md": "changed since the recording\n" });
    const report = await runEval(
      evalOptions(recorded, {
        cases: [{ sessionId: recorded.a, toTurn: 1 }],
        tools: { read_file: "live", lookup: "live" },
      }),
    );
    const entries = await entriesOf(recorded.store, report.items[0]?.sessionId as string);
    const results = entries.flatMap((e) => (e.kind === "tool_result" ? [e.item] : []));
    expect(JSON.stringify(results[0])).toContain("changed since the recording");
    expect(recorded.lookups).toEqual(["lookup", "lookup"]);
  });

  it("scores forbidden tools, budgets and the cache-read share, for the variant and the baseline alike", async () => {
    const recorded = await record();
    const report = await runEval(
      evalOptions(recorded, {
        scoring: { forbiddenTools: ["grep"], budget: { maxRequests: 2 }, minCacheShare: 0.3 },
      }),
    );
    const [a, b] = report.items;
    const verdicts = (item: typeof a) =>
      Object.fromEntries((item?.scores ?? []).map((s) => [s.name, [s.pass, s.baseline?.pass]]));
    // A: four requests (over the budget), 180 of 520 input tokens from the cache.
    expect(verdicts(a)).toEqual({
      answer: [true, true],
      trajectory: [true, true],
      budget: [false, false],
      cache_share: [true, true],
    });
    expect(a?.item.cacheShare).toBeCloseTo(180 / 520);
    // B called grep, as its recording did: failed on both sides, so no regression.
    expect(verdicts(b).trajectory).toEqual([false, false]);
    expect(b?.scores.find((s) => s.name === "trajectory")?.detail).toBe("forbidden: grep");
    expect([a?.difference, b?.difference, report.failed]).toEqual([0, 0, 0]);
  });

  it("a rerun with the same eval id redoes no finished item", async () => {
    const recorded = await record();
    const first = await runEval(evalOptions(recorded, { evalId: "again" }));
    const before = recorded.world.double.requests.length;
    const second = await runEval(evalOptions(recorded, { evalId: "again" }));
    expect(recorded.world.double.requests.length).toBe(before);
    expect(second.items.map((i) => i.resumed)).toEqual([true, true]);
    expect(second.items.map((i) => i.sessionId)).toEqual(first.items.map((i) => i.sessionId));
  });

  it("refuses a case outside its session before running any item", async () => {
    const recorded = await record();
    const before = recorded.world.double.requests.length;
    const error = await runEval(
      evalOptions(recorded, { cases: [{ sessionId: recorded.a, fromTurn: 3 }] }),
    ).catch((e: unknown) => e);
    expect(EvalCaseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("turns 3-2 are not in the session (it has turns 1-2)");
    const unknown = await runEval(
      evalOptions(recorded, { cases: [{ sessionId: "01900000-0000-7000-8000-000000000000" }] }),
    ).catch((e: unknown) => e);
    expect((unknown as Error).message).toContain("no such session");
    expect(recorded.world.double.requests.length).toBe(before);
  });
});
