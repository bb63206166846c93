import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import type { CapturedRequest, ScriptedResponse } from "@podkit/testkit";
import { afterEach, describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { EvalQueryError } from "../src/eval/errors.js";
import { selectRecordedSessions } from "../src/eval/eval-query.js";
import type { EvalQuery } from "../src/eval/eval-types.js";
import { runEval } from "../src/eval/run-eval.js";
import { openWorkspaceFsStore } from "../src/pod/store-selection.js";
import { RECORDED, scriptedAgent } from "./eval-harness.js";
import { testTools, usePodWorlds, type World } from "./pod-harness.js";

// Cases by query over the store (docs/evals.md, "Cases by query"): the recorded root sessions that
// match every filter, newest first — on the file store and on PostgreSQL alike, through the
// `Store` interface. Eval items are never selected.

const newWorld = usePodWorlds();
const database = usePostgresDatabases();
const stores: Store<Item>[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const STORES: { name: string; open: (world: World) => Promise<Store<Item>> }[] = [
  { name: "the file store", open: async (world) => openWorkspaceFsStore(world.loaded.dataDir) },
  { name: "PostgreSQL", open: async () => new PostgresStore<Item>({ url: await database() }) },
];

/** The recorded agent, and a 400 for the input "fail please" (its turn ends `errored`). */
function agent(request: CapturedRequest): ScriptedResponse {
  if (JSON.stringify(request.body.messages).includes("fail please"))
    return {
      fault: {
        kind: "status",
        status: 400,
        body: '{"type":"error","error":{"type":"invalid_request_error","message":"no"}}',
      },
    };
  return scriptedAgent(RECORDED)(request);
}

interface Sessions {
  world: World;
  store: Store<Item>;
  /** grep; then (after `between`) read_file + lookup over two turns; a plain answer; an errored turn. */
  grep: string;
  readme: string;
  hello: string;
  failed: string;
  /** A time between the first session and the others. */
  between: number;
  /** The session of an eval item (over `grep`). */
  item: string;
}

async function recordSessions(open: (world: World) => Promise<Store<Item>>): Promise<Sessions> {
  const world = await newWorld({
    toolPackages: [testTools({ lookup: () => "value of answer: 42" })],
    double: { respond: agent },
    manifestExtra: '[[scope.allow]]\ntarget = ".."\npermission = "read"',
  });
  const store = await open(world);
  stores.push(store);
  const session = async (...inputs: string[]) => {
    const pod = await world.pod({ store });
    for (const input of inputs) await pod.run(input).result.catch(() => undefined);
    return pod.sessionId as string;
  };
  const grep = await session("grep for readme");
  await new Promise((resolve) => setTimeout(resolve, 20));
  const between = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const readme = await session("what does the readme say?", "and the answer again?");
  const hello = await session("say hello");
  const failed = await session("fail please");
  const { model: _model, ...podOptions } = world.options();
  const report = await runEval({
    cases: [{ sessionId: grep }],
    store,
    variant: { manifest: world.loaded, model: world.double.baseUrl },
    podOptions,
  });
  return { world, store, grep, readme, hello, failed, between, item: report.items[0]?.sessionId as string };
}

describe.each(STORES)("cases by query on $name", ({ open }) => {
  it("select the recorded root sessions matching every filter, newest first, and never an eval item", async () => {
    const s = await recordSessions(open);
    const select = async (query: EvalQuery) =>
      (await selectRecordedSessions(s.store, query)).map((c) => c.sessionId);
    expect(await s.store.listSessions()).toContain(s.item);
    expect(await select({})).toEqual([s.failed, s.hello, s.readme, s.grep]);
    expect(await select({ tool: "lookup" })).toEqual([s.readme]);
    expect(await select({ tool: ["read_file", "lookup"] })).toEqual([s.readme]);
    expect(await select({ tool: ["grep", "lookup"] })).toEqual([]);
    expect(await select({ status: "errored" })).toEqual([s.failed]);
    expect(await select({ status: ["finished", "idle"] })).toEqual([s.hello, s.readme, s.grep]);
    expect(await select({ since: new Date(s.between).toISOString() })).toEqual([s.failed, s.hello, s.readme]);
    expect(await select({ until: new Date(s.between) })).toEqual([s.grep]);
    expect(await select({ since: "7d", status: "finished", limit: 2 })).toEqual([s.hello, s.readme]);
    expect(await select({ input: "README" })).toEqual([s.readme, s.grep]);
    expect(await select({ limit: 0 })).toEqual([]);
    // `<n>h` counts back from the eval's clock.
    expect(await selectRecordedSessions(s.store, { since: "1h" }, () => s.between - 7_200_000)).toHaveLength(
      4,
    );
    expect(await selectRecordedSessions(s.store, { until: "1h" }, () => s.between + 3_600_000)).toEqual([
      { sessionId: s.grep },
    ]);
  });

  it("runs the sessions a query selects as cases, beside the ones named", async () => {
    const s = await recordSessions(open);
    const { model: _model, ...podOptions } = s.world.options();
    const report = await runEval({
      cases: [
        { where: { tool: "lookup" } },
        { sessionId: s.hello },
        { where: { status: "errored", limit: 1 } },
      ],
      store: s.store,
      variant: { manifest: s.world.loaded, model: s.world.double.baseUrl },
      podOptions,
    });
    expect(report.items.map((i) => i.sourceSessionId)).toEqual([s.readme, s.hello, s.failed]);
    expect(report.items.slice(0, 2).map((i) => [i.pass, i.difference])).toEqual([
      [true, 0],
      [true, 0],
    ]);
  });
});

describe("a bad query", () => {
  it("names the filter and what is wrong, before anything runs", async () => {
    const world = await newWorld();
    const store = openWorkspaceFsStore(world.loaded.dataDir);
    stores.push(store);
    const problem = async (query: EvalQuery) => {
      const error = await selectRecordedSessions(store, query).catch((e: unknown) => e);
      expect(EvalQueryError.isInstance(error)).toBe(true);
      return [(error as EvalQueryError).key, (error as Error).message, (error as EvalQueryError).hint];
    };
    expect(await problem({ status: "done" as never })).toEqual([
      "status",
      'eval query status: "done" is not a session status',
      expect.stringContaining("finished, paused"),
    ]);
    expect((await problem({ since: "yesterday" })).slice(0, 2)).toEqual([
      "since",
      'eval query since: "yesterday" is not a date',
    ]);
    expect((await problem({ limit: 1.5 })).slice(0, 2)).toEqual([
      "limit",
      "eval query limit: 1.5 is not a whole number ≥ 0",
    ]);
    expect((await problem({ colour: "red" } as EvalQuery)).slice(0, 2)).toEqual([
      "colour",
      "eval query colour: no such filter",
    ]);
  });
});
