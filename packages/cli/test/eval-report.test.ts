import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// The scripted agents of the pod's eval tests: the recording's, and a worse one.
import { RECORDED, scriptedAgent, WORSE } from "../../pod/test/eval-harness.js";
import { EXIT_CODES } from "../src/help.js";
import { runBin } from "./run-bin.js";

// What `podkit eval` reports (docs/evals.md): the cost of each item and of its baseline from a
// price table, `--ci`'s own exit code on a regression, progress on stderr with `--json` on a clean
// stdout, and item sessions `session show` prints with their origin and scores.

let recording: ProviderDouble;
let worse: ProviderDouble;
let root: string;
let workspace: string;
let home: string;

beforeEach(async () => {
  recording = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(RECORDED) });
  worse = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(WORSE) });
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-eval-report-")));
  workspace = join(root, "ws");
  home = join(root, "home");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    [
      "[pod]",
      'name = "evaluated"',
      "[model]",
      'ref = "anthropic/claude-sonnet-4-5"',
      `base_url = "${recording.baseUrl}"`,
      "[[scope.allow]]",
      'target = ".."',
      'permission = "read"',
    ].join("\n"),
  );
  await writeFile(join(workspace, "README.md"), "readme\n");
  await writeFile(
    join(workspace, "prices.toml"),
    [
      '["anthropic/claude-sonnet-4-5"]',
      "input = 3",
      "output = 15",
      "cache_read = 0.3",
      "cache_write = 3.75",
      "",
      '["anthropic/claude-opus-4-1"]',
      "input = 15",
      "output = 75",
      "cache_read = 1.5",
    ].join("\n"),
  );
});
afterEach(async () => {
  await recording.close();
  await worse.close();
  await rm(root, { recursive: true, force: true });
});

const podkit = (...args: string[]) =>
  runBin(args, { cwd: workspace, env: { HOME: home, ANTHROPIC_API_KEY: "test-key" } });

async function recordGrep(): Promise<string> {
  const run = await podkit("run", "grep for readme");
  expect(run.code, run.stderr).toBe(0);
  return /podkit resume (\S+)/.exec(run.stderr)?.[1] as string;
}

async function itemSessionOf(evalId: string): Promise<string> {
  const dir = join(workspace, ".podkit", "evals", evalId, "items");
  const [file] = await readdir(dir);
  return JSON.parse(await readFile(join(dir, file as string), "utf8")).sessionId;
}

describe("the podkit eval report", () => {
  it("prices each item at the variant's model and its baseline at the recording's, per case and in total", async () => {
    const session = await recordGrep();
    // Two requests: 240 input tokens (60 read from the cache), 24 output tokens.
    const result = await podkit(
      "eval",
      session,
      "--model",
      "anthropic/claude-opus-4-1",
      "--prices",
      "prices.toml",
      "--eval-id",
      "priced",
      "--json",
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    const [item] = report.items;
    expect(item.item).toMatchObject({
      inputTokens: 240,
      cacheReadTokens: 60,
      cacheWriteTokens: 0,
      outputTokens: 24,
    });
    // Opus: 180 × 15 + 60 × 1.5 + 24 × 75 = 4590 micro-dollars; Sonnet: 180 × 3 + 60 × 0.3 + 24 × 15 = 918.
    expect(item.item.cost).toBeCloseTo(0.00459, 10);
    expect(item.baseline.cost).toBeCloseTo(0.000918, 10);
    expect(item.item.cacheShare).toBeCloseTo(0.25);
    expect(report.models).toEqual({
      item: "anthropic/claude-opus-4-1",
      baseline: "anthropic/claude-sonnet-4-5",
    });
    expect(report.totals.item).toMatchObject({ requests: 2, inputTokens: 240, cacheShare: 0.25 });
    expect(report.totals.item.cost).toBeCloseTo(0.00459, 10);
    expect(report.totals.baseline.cost).toBeCloseTo(0.000918, 10);
    // Progress went to stderr, one line per item: stdout is the JSON alone.
    expect(result.stderr).toBe(`[1/1] ${session} pass\n`);

    // The table shows the costs, and a rerun reads them back from the finished item.
    const table = await podkit(
      "eval",
      session,
      "--model",
      "anthropic/claude-opus-4-1",
      "--prices",
      "prices.toml",
      "--eval-id",
      "priced",
    );
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(/\bcache\s+cost\s+base cost\s+result$/);
    expect(lines[2]).toMatch(/\s25%\s+\$0\.0046\s+\$0\.0009\s+pass$/);
    expect(lines.at(-1)).toMatch(/; 264 tokens \(25% cache reads\); cost \$0\.0046 \(baseline \$0\.0009\)$/);
    expect(table.stderr).toBe(`[1/1] ${session} pass (finished before)\n`);

    // A model the table has no price for: an unknown cost, not a wrong one.
    const unpriced = JSON.parse(
      (
        await podkit(
          "eval",
          session,
          "--model",
          "anthropic/claude-haiku-4-5",
          "--prices",
          "prices.toml",
          "--json",
        )
      ).stdout,
    );
    expect([unpriced.items[0].item.cost, unpriced.totals.item.cost]).toEqual([null, null]);
    expect(unpriced.items[0].baseline.cost).toBeCloseTo(0.000918, 10);
  });

  it("refuses a price table it cannot read, naming the file and the key", async () => {
    await writeFile(
      join(workspace, "bad.toml"),
      '["anthropic/claude-sonnet-4-5"]\ninput = "three"\noutput = 15\n',
    );
    const result = await podkit("eval", "x", "--prices", "bad.toml");
    expect(result.code).toBe(1);
    const [error, hint] = result.stderr.trimEnd().split("\n");
    expect(error).toBe(
      `error: eval prices ${join(workspace, "bad.toml")} at anthropic/claude-sonnet-4-5.input: Invalid input: expected number, received string`,
    );
    expect(hint).toMatch(/^hint: one table per model ref, USD per million tokens/);
  });

  it("--ci exits with the eval-regression code and prints `N passed, N failed` last", async () => {
    const readme = await podkit("run", "what does the readme say?");
    const session = /podkit resume (\S+)/.exec(readme.stderr)?.[1] as string;
    const code = Number(EXIT_CODES.find(([, meaning]) => meaning.startsWith("eval --ci"))?.[0]);
    expect(code).toBe(5);
    const regressed = await podkit("eval", session, "--ci", "--set", `model.base_url="${worse.baseUrl}"`);
    expect(regressed.code, regressed.stderr).toBe(code);
    expect(regressed.stdout.trimEnd().split("\n").at(-1)).toBe("0 passed, 1 failed");
    expect(regressed.stderr).toBe(`[1/1] ${session} FAIL (1 divergence)\n`);
    // An error is not a regression: it keeps exit code 1.
    const missing = await podkit("eval", "01900000-0000-7000-8000-000000000000", "--ci");
    expect(missing.code).toBe(1);
  });

  it("session show prints an item's origin and its scores", async () => {
    const session = await recordGrep();
    const result = await podkit(
      "eval",
      session,
      "--model",
      "anthropic/claude-opus-4-1",
      "--eval-id",
      "shown",
    );
    expect(result.code, result.stderr).toBe(0);
    const item = await itemSessionOf("shown");
    const shown = await podkit("session", "show", item);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      `  eval item of ${session} turns 1-1 (eval shown; model anthropic/claude-opus-4-1)\n  1. "grep for readme" → finished\n`,
    );
    expect(shown.stdout).toContain(
      "  ✓ score answer 1.000 (baseline 1.000)\n  ✓ score trajectory 1.000 (baseline 1.000)\n",
    );
    const json = JSON.parse((await podkit("session", "show", item, "--json")).stdout);
    expect(json.segments[0].eval).toEqual({
      origin: {
        sourceSession: session,
        fromTurn: 1,
        toTurn: 1,
        evalId: "shown",
        variant: { model: "anthropic/claude-opus-4-1" },
      },
      scores: [
        { name: "answer", score: 1, pass: true, baselineScore: 1 },
        { name: "trajectory", score: 1, pass: true, baselineScore: 1 },
      ],
    });
  });
});
