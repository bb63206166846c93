import { rm } from "node:fs/promises";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// The scripted agent of the pod's eval tests: the recording's.
import { RECORDED, scriptedAgent } from "../../pod/test/eval-harness.js";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit eval --where` (docs/evals.md, "Cases by query"): the recorded sessions of the store the
// manifest selects — files or PostgreSQL — filtered by tool, status, time, input, limit.

const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const STORES = [
  { name: "the file store", manifest: "", url: async () => ({}) },
  {
    name: "PostgreSQL",
    manifest: `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`,
    url: async (): Promise<Record<string, string>> => ({ [URL_VARIABLE]: await database() }),
  },
];

describe.each(STORES)("podkit eval --where on $name", ({ manifest, url }) => {
  let env: Record<string, string>;
  beforeEach(async () => {
    double = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(RECORDED) });
    ws = await doubleWorkspace(double.baseUrl, manifest);
    env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", ...(await url()) };
  });
  const podkit = (...args: string[]) => runBin(args, { cwd: ws.workspace, env });
  const record = async (input: string) => {
    const run = await podkit("run", input);
    expect(run.code, run.stderr).toBe(0);
    return /podkit resume (\S+)/.exec(run.stderr)?.[1] as string;
  };

  it("replays the sessions a query selects, and never the eval's own items", async () => {
    const grep = await record("grep for readme");
    const hello = await record("say hello");
    const result = await podkit(
      "eval",
      "--where",
      "tool=grep",
      "--where",
      "since=1d",
      "--json",
      "--eval-id",
      "q",
    );
    expect(result.code, result.stderr).toBe(0);
    expect(
      JSON.parse(result.stdout).items.map((i: { sourceSessionId: string }) => i.sourceSessionId),
    ).toEqual([grep]);
    // The item just written is a session of the store too; a query never selects it.
    const all = await podkit("eval", "--where", "status=finished,paused", "--json");
    expect(all.code, all.stderr).toBe(0);
    const sources = JSON.parse(all.stdout).items.map((i: { sourceSessionId: string }) => i.sourceSessionId);
    expect(sources).toEqual([hello, grep]);
    const newest = await podkit("eval", "--where", "limit=1", "--where", "input=HELLO", "--json");
    expect(
      JSON.parse(newest.stdout).items.map((i: { sourceSessionId: string }) => i.sourceSessionId),
    ).toEqual([hello]);
  });
});

describe("podkit eval --where with a bad filter", () => {
  beforeEach(async () => {
    double = await startProviderDouble({ wire: "anthropic" });
    ws = await doubleWorkspace(double.baseUrl);
  });
  const podkit = (...args: string[]) =>
    runBin(args, { cwd: ws.workspace, env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" } });

  it("names a filter it cannot use", async () => {
    const colour = await podkit("eval", "--where", "colour=red");
    expect(colour.code).toBe(1);
    expect(colour.stderr).toMatch(/^error: eval query colour: no such filter\nhint: filters: since\/until/);
    const since = await podkit("eval", "--where", "since=last week");
    expect(since.stderr).toContain('error: eval query since: "last week" is not a date');
    const limit = await podkit("eval", "--where", "limit=few");
    expect(limit.stderr).toContain('error: eval query limit: "few" is not a whole number');
    expect(limit.stderr).not.toMatch(/^\s+at /m);
  });
});
