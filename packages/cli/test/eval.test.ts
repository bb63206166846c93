import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
// The scripted agents of the pod's eval tests: the recording's, and a worse one.
import { RECORDED, scriptedAgent, WORSE } from "../../pod/test/eval-harness.js";
import { runBin } from "./run-bin.js";
import { sessionEntries } from "./support/workspace.js";

// `podkit eval` (docs/evals.md): sessions recorded with `podkit run` against the provider double
// are replayed through the same double (passes, difference 0) and a worse one (`--ci` fails with
// `N passed, N failed` last and exit code 5). Child processes, as a user runs them.

let recording: ProviderDouble;
let worse: ProviderDouble;
let root: string;
let workspace: string;
let home: string;

beforeEach(async () => {
  recording = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(RECORDED) });
  worse = await startProviderDouble({ wire: "anthropic", respond: scriptedAgent(WORSE) });
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-eval-")));
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
});
afterEach(async () => {
  await recording.close();
  await worse.close();
  await rm(root, { recursive: true, force: true });
});

const podkit = (...args: string[]) =>
  runBin(args, { cwd: workspace, env: { HOME: home, ANTHROPIC_API_KEY: "test-key" } });
const sessionOf = (stderr: string) => /podkit resume (\S+)/.exec(stderr)?.[1] as string;

async function recordTwo(): Promise<[string, string]> {
  const grep = await podkit("run", "grep for readme");
  expect(grep.code, grep.stderr).toBe(0);
  const hello = await podkit("run", "say hello");
  expect(hello.code, hello.stderr).toBe(0);
  return [sessionOf(grep.stderr), sessionOf(hello.stderr)];
}

describe("podkit eval", () => {
  it("replays recorded sessions with an unchanged variant: a table, difference 0, --ci passes", async () => {
    const [grep, hello] = await recordTwo();
    const recorded = recording.requests.length;
    const result = await podkit("eval", grep, hello, "--ci", "--eval-id", "same");
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toBe("2 passed, 0 failed");
    expect(lines[1]).toMatch(
      /^case\s+score\s+baseline\s+diff\s+diverg\.\s+tokens\s+base tokens\s+cache\s+result$/,
    );
    expect(lines[2]).toMatch(
      new RegExp(`^${grep}\\s+1\\.000\\s+1\\.000\\s+0\\s+0\\s+\\d+\\s+\\d+\\s+\\d+%\\s+pass$`),
    );
    expect(recording.requests.length).toBe(recorded * 2);
    // Each item is a session `session show` displays, beside the recording.
    const entries = await sessionEntries(workspace, await itemSessionOf("same", 0));
    expect(entries[1]).toMatchObject({
      kind: "extension",
      domain: "eval.origin",
      payload: { source_session: grep },
    });
    const shown = await podkit("session", "show", await itemSessionOf("same", 0));
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("grep for readme");
    expect(shown.stdout).toContain("Found it in README.md.");
  });

  it("--ci fails a worse model with `N passed, N failed` last and exit code 5; --json carries the report", async () => {
    const [grep, hello] = await recordTwo();
    // A dataset: a recorded session, and an input never recorded whose expected answer the
    // model does not give (no baseline: it passes only when every scorer passes).
    await writeFile(
      join(workspace, "cases.jsonl"),
      `${JSON.stringify({ session: grep })}\n${JSON.stringify({ input: "say hello", expected: "Hello there." })}\n`,
    );
    expect(hello).toBeDefined();
    const result = await podkit(
      "eval",
      "--dataset",
      "cases.jsonl",
      "--ci",
      "--set",
      `model.base_url="${worse.baseUrl}"`,
    );
    expect(result.code, result.stdout + result.stderr).toBe(5);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("1 passed, 1 failed");
    expect(result.stdout).toContain('answer: turn 1: "Hello." ≠ "Hello there."');
    const json = await podkit("eval", grep, "--json", "--set", `model.base_url="${worse.baseUrl}"`);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.items[0]).toMatchObject({ sourceSessionId: grep, difference: 0, pass: true });
  });

  it("--ci fails a variant that calls a tool the recording never ran, and reports the divergence", async () => {
    const readme = await podkit("run", "what does the readme say?");
    const session = sessionOf(readme.stderr);
    const same = await podkit("eval", session, "--ci");
    expect(same.stdout.trimEnd().split("\n").at(-1)).toBe("1 passed, 0 failed");
    const result = await podkit("eval", session, "--ci", "--set", `model.base_url="${worse.baseUrl}"`);
    expect(result.code).toBe(5);
    expect(result.stdout).toContain(`${session}: turn 1: grep {"pattern":"answer"} was not recorded`);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("0 passed, 1 failed");
    // A tolerance wide enough lets the same regression pass.
    const tolerant = await podkit(
      "eval",
      session,
      "--ci",
      "--tolerance",
      "1",
      "--set",
      `model.base_url="${worse.baseUrl}"`,
    );
    expect(tolerant.code).toBe(0);
  });

  it("names what is wrong with a bad invocation in one line with a hint", async () => {
    const none = await podkit("eval");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("nothing to evaluate");
    const mode = await podkit("eval", "x", "--tools", "record");
    expect(mode.stderr).toContain('--tools: unknown tool mode "record"');
    await writeFile(join(workspace, "bad.jsonl"), '{"session": "a"}\n{"sesion": "b"}\n');
    const bad = await podkit("eval", "--dataset", "bad.jsonl");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/bad\.jsonl:2/);
    expect(bad.stderr).not.toContain("    at ");
  });
});

async function itemSessionOf(evalId: string, index: number): Promise<string> {
  const dir = join(workspace, ".podkit", "evals", evalId, "items");
  const files = (await readdir(dir)).sort();
  const { readFile } = await import("node:fs/promises");
  return JSON.parse(await readFile(join(dir, files[index] as string), "utf8")).sessionId;
}
