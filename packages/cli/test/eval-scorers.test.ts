import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CapturedRequest, type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// The scripted agent of the pod's eval tests: the recording's.
import { RECORDED, scriptedAgent } from "../../pod/test/eval-harness.js";
import { type BinResult, runBin } from "./run-bin.js";

// `podkit eval --scorer <module>` and `--judge <rubric>` (docs/evals.md): custom scorers loaded
// from ES modules relative to the current directory, and judges grading through a configured
// model, end to end in child processes against the provider double.

let double: ProviderDouble;
let root: string;
let workspace: string;
let home: string;

/** A judge's request: its system prompt is the catalog's `eval_judge_system`. */
const isJudge = (request: CapturedRequest) =>
  JSON.stringify(request.body.system ?? "").includes("You grade the work");

beforeEach(async () => {
  const agent = scriptedAgent(RECORDED);
  double = await startProviderDouble({
    wire: "anthropic",
    respond: (request) =>
      isJudge(request)
        ? {
            parts: [
              {
                type: "tool_call",
                name: "final_answer",
                arguments: { score: 0.75, reason: "Mostly right." },
              },
            ],
          }
        : agent(request),
  });
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-eval-scorers-")));
  workspace = join(root, "ws");
  home = join(root, "home");
  await mkdir(join(workspace, ".podkit", "prompts"), { recursive: true });
  await mkdir(join(workspace, "scorers"), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    [
      "[pod]",
      'name = "evaluated"',
      "[model]",
      'ref = "anthropic/claude-sonnet-4-5"',
      `base_url = "${double.baseUrl}"`,
    ].join("\n"),
  );
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

const podkit = (args: string[], cwd = workspace) =>
  runBin(args, { cwd, env: { HOME: home, ANTHROPIC_API_KEY: "test-key" } });

async function recordHello(): Promise<string> {
  const run = await podkit(["run", "say hello"]);
  expect(run.code, run.stderr).toBe(0);
  return /podkit resume (\S+)/.exec(run.stderr)?.[1] as string;
}

function expectOneLineError(result: BinResult, error: string | RegExp): void {
  const lines = result.stderr.trimEnd().split("\n");
  expect(result.code).toBe(1);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(error);
  expect(lines[1]).toMatch(/^hint: a scorer module default-exports a function \(item\) =>/);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe("podkit eval --scorer", () => {
  it("runs each module's default export on the item and its baseline, from paths relative to the current directory", async () => {
    const session = await recordHello();
    await writeFile(
      join(workspace, "scorers", "short.mjs"),
      [
        "export default function short(item) {",
        '  const answer = item.turns.at(-1)?.answer ?? "";',
        "  const pass = answer.length <= 10;",
        "  return { name: 'short', score: pass ? 1 : 0, pass, detail: answer.length + ' characters' };",
        "}",
      ].join("\n"),
    );
    await writeFile(
      join(workspace, "scorers", "async.mjs"),
      "export default async (item) => ({ name: 'turns', score: item.turns.length === 1 ? 1 : 0, pass: true });\n",
    );
    // From a subdirectory: the paths are the current directory's, not the workspace's.
    const result = await podkit(
      ["eval", session, "--scorer", "../scorers/short.mjs", "--scorer", "../scorers/async.mjs", "--json"],
      join(workspace, "scorers"),
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.items[0].scores.map((s: { name: string }) => s.name)).toEqual([
      "answer",
      "trajectory",
      "short",
      "turns",
    ]);
    expect(report.items[0].scores[2]).toMatchObject({
      score: 1,
      pass: true,
      detail: "6 characters",
      baseline: { name: "short", score: 1, detail: "6 characters" },
    });
    expect(report.items[0].pass).toBe(true);
  });

  it("fails the item when a scorer breaks while scoring, naming the scorer", async () => {
    const session = await recordHello();
    await writeFile(join(workspace, "scorers", "broken.mjs"), "export default () => 42;\n");
    const result = await podkit(["eval", session, "--scorer", "scorers/broken.mjs", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const item = JSON.parse(result.stdout).items[0];
    expect(item.pass).toBe(false);
    expect(item.error).toBe("scorer broken failed: it returned 42, not {name, score, pass}");
  });

  it("refuses a missing module, one that throws at import, and one without a scorer, naming the file; nothing runs", async () => {
    const session = await recordHello();
    const recorded = double.requests.length;
    await writeFile(join(workspace, "scorers", "throws.mjs"), 'throw new Error("no scoring today");\n');
    await writeFile(join(workspace, "scorers", "syntax.mjs"), "export default (item => ;\n");
    await writeFile(join(workspace, "scorers", "object.mjs"), "export default { name: 'x', score: 1 };\n");
    await writeFile(join(workspace, "scorers", "named.mjs"), "export const scorer = () => ({});\n");

    expectOneLineError(
      await podkit(["eval", session, "--scorer", "scorers/none.mjs"]),
      new RegExp(`^error: --scorer scorers/none\\.mjs: no such file \\(${workspace}/scorers/none\\.mjs\\)$`),
    );
    expectOneLineError(
      await podkit(["eval", session, "--scorer", "scorers/throws.mjs"]),
      /^error: --scorer scorers\/throws\.mjs: importing it failed: no scoring today$/,
    );
    expectOneLineError(
      await podkit(["eval", session, "--scorer", "scorers/syntax.mjs"]),
      /^error: --scorer scorers\/syntax\.mjs: importing it failed: /,
    );
    expectOneLineError(
      await podkit(["eval", session, "--scorer", "scorers/object.mjs"]),
      /^error: --scorer scorers\/object\.mjs: its default export is an object, not a scorer function$/,
    );
    expectOneLineError(
      await podkit(["eval", session, "--scorer", "scorers/named.mjs"]),
      /^error: --scorer scorers\/named\.mjs: it has no default export, not a scorer function$/,
    );
    expect(double.requests.length).toBe(recorded);
    expect(existsSync(join(workspace, ".podkit", "evals"))).toBe(false);
  });
});

describe("podkit eval --judge", () => {
  it("grades with the catalog's rubric and with a workspace prompt file, through --judge-model", async () => {
    const session = await recordHello();
    await writeFile(join(workspace, ".podkit", "prompts", "tone.md"), "The answer is friendly.\n");
    const result = await podkit([
      "eval",
      session,
      "--judge",
      "default",
      "--judge",
      "friendly=$workspace/tone",
      "--judge-model",
      "anthropic/claude-haiku-4-5",
      "--json",
    ]);
    expect(result.code, result.stderr).toBe(0);
    const scores = JSON.parse(result.stdout).items[0].scores;
    expect(scores.slice(2)).toMatchObject([
      { name: "judge", score: 0.75, pass: true, detail: "Mostly right.", baseline: { score: 0.75 } },
      { name: "friendly", score: 0.75, pass: true },
    ]);
    const judged = double.requests.filter(isJudge);
    expect(judged).toHaveLength(4);
    // The judge's model ref, on the manifest's provider: the manifest's endpoint (this double).
    for (const request of judged) expect(request.body.model).toBe("claude-haiku-4-5");
    const systems = judged.map((r) => JSON.stringify(r.body.system));
    expect(systems.filter((s) => s.includes("The answer is friendly."))).toHaveLength(2);
    expect(systems.filter((s) => s.includes("claim nothing the conversation does not support"))).toHaveLength(
      2,
    );
  });

  it("refuses a rubric that is neither default nor a prompt file", async () => {
    const result = await podkit(["eval", "x", "--judge", "be nice"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error: --judge be nice: expected default or a prompt file");
    expect(result.stderr).toContain("hint: put the rubric in .podkit/prompts/<name>.md");
  });
});
