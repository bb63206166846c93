import type { Item } from "@podkit/llm-worker";
import { readSessionView } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { startProviderDouble } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { EVAL_ORIGIN_DOMAIN } from "../src/eval/eval-types.js";
import { runEval } from "../src/eval/run-eval.js";
import { RECORDED, scriptedAgent, WORSE } from "./eval-harness.js";
import { testTools, usePodWorlds } from "./pod-harness.js";

// Evals by replay on the PostgreSQL store: sessions recorded into the database are replayed, and
// every item is written there as a session of its own.

const database = usePostgresDatabases();
const newWorld = usePodWorlds();

describe("runEval on PostgreSQL", () => {
  it("replays recorded sessions from the database and writes the items there", async () => {
    const store = new PostgresStore<Item>({ url: await database() });
    try {
      const lookups: string[] = [];
      const lookup = testTools({ lookup: (args) => `value of ${String(args.key)}: 42` }, lookups);
      const world = await newWorld({
        toolPackages: [lookup],
        double: { respond: scriptedAgent(RECORDED) },
        manifestExtra: '[[scope.allow]]\ntarget = ".."\npermission = "read"',
      });
      const pod = await world.pod({ store });
      await pod.run("what does the readme say?").result;
      await pod.run("and the answer again?").result;
      const source = pod.sessionId as string;
      const { model: _model, ...podOptions } = world.options();
      const unchanged = await runEval({
        cases: [{ sessionId: source }],
        store,
        variant: { manifest: world.loaded, model: world.double.baseUrl },
        podOptions,
        evalId: "pg-unchanged",
      });
      expect(unchanged.items[0]).toMatchObject({ difference: 0, divergences: [], pass: true });
      expect(lookups).toEqual(["lookup"]);
      const itemSession = unchanged.items[0]?.sessionId as string;
      expect(await store.listSessions()).toEqual(expect.arrayContaining([source, itemSession]));
      const view = await readSessionView(store, itemSession);
      expect(view.segments[0]?.turns.map((t) => t.answer)).toEqual([
        "It says readme; the answer is 42.",
        "Still 42.",
      ]);
      const first = [];
      for await (const entry of store.readAll({ sessionId: itemSession, segmentId: view.head.segmentId }))
        first.push(entry);
      expect(first[1]).toMatchObject({ domain: EVAL_ORIGIN_DOMAIN, payload: { source_session: source } });

      const worse = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(WORSE) });
      try {
        const regressed = await runEval({
          cases: [{ sessionId: source }],
          store,
          variant: { manifest: world.loaded, model: worse.baseUrl },
          podOptions,
          evalId: "pg-worse",
        });
        expect(regressed.items[0]?.pass).toBe(false);
        expect(regressed.failed).toBe(1);
      } finally {
        await worse.close();
      }
    } finally {
      await store.close();
    }
  });
});
