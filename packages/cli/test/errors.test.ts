import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../src/index.js";
import { type BinResult, runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// Each failure a user can run into prints `error: …` (one line) and `hint: …`, exits non-zero and
// shows no stack trace; each test also checks that nothing was left half-done.

let root: string;
let double: ProviderDouble;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-errors-")));
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

function expectOneLineError(result: BinResult, error: string | RegExp, hint: string | RegExp): void {
  const lines = result.stderr.trimEnd().split("\n");
  expect(result.code).not.toBe(0);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(error);
  expect(lines[1]).toMatch(/^hint: /);
  expect(lines[1]).toMatch(hint);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

async function workspaceWith(manifest: string): Promise<string> {
  const ws = join(root, "ws");
  await mkdir(join(ws, ".podkit"), { recursive: true });
  await writeFile(join(ws, ".podkit", "manifest.toml"), manifest);
  return ws;
}

const env = () => ({ HOME: join(root, "home"), ANTHROPIC_API_KEY: "test-key" });

describe("errors as one line plus a hint", () => {
  it("no manifest: points at podkit init", async () => {
    await mkdir(join(root, "empty"));
    const result = await runBin(["run", "hello"], { cwd: join(root, "empty"), env: env() });
    expectOneLineError(result, /no manifest: .*\.podkit\/manifest\.toml does not exist/, /podkit init/);
    expect(result.code).toBe(1);
  });

  it("bad TOML: names file, line and column (the offending line is shown under it)", async () => {
    const ws = await workspaceWith('[pod]\nname = "x\n');
    const result = await runBin(["run", "hello"], { cwd: ws, env: env() });
    const [first, ...rest] = result.stderr.trimEnd().split("\n");
    expect(first).toMatch(/^error: \.podkit\/manifest\.toml:2:10: TOML syntax error/);
    expect(rest.at(-1)).toMatch(/^hint: fix the TOML syntax/);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.code).toBe(1);
  });

  it("unknown provider: lists the known ones", async () => {
    const ws = await workspaceWith('[pod]\nname = "x"\n[model]\nref = "acme/model-1"\n');
    const result = await runBin(["run", "hello"], { cwd: ws, env: env() });
    expectOneLineError(
      result,
      /unknown provider "acme" in "acme\/model-1"; expected one of anthropic, openai, openai-chat, google, ollama, openai-compatible/,
      /docs\/manifest\.md/,
    );
  });

  it("missing API key: names the variable, before any session is written", async () => {
    const ws = await workspaceWith('[pod]\nname = "x"\n[model]\nref = "openai/gpt-5"\n');
    const result = await runBin(["run", "hello"], { cwd: ws, env: { HOME: join(root, "home") } });
    expectOneLineError(
      result,
      /no API key for model "openai\/gpt-5": the environment variable OPENAI_API_KEY is not set/,
      /export OPENAI_API_KEY=/,
    );
    expect(existsSync(join(ws, ".podkit", "sessions"))).toBe(false);
  });

  it("unreadable AGENTS.md: names the file, for run and prompt render, and writes no session", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl);
    await writeFile(join(workspace, "AGENTS.md"), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]));
    for (const args of [
      ["run", "hello"],
      ["prompt", "render"],
    ]) {
      const result = await runBin(args, { cwd: workspace, env: env() });
      expectOneLineError(result, /cannot use .*AGENTS\.md: it is not valid UTF-8/, /readable UTF-8 text/);
    }
    expect(existsSync(join(workspace, ".podkit", "sessions"))).toBe(false);
    expect(double.requests).toHaveLength(0);
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("a scope rule that cannot be used: names the key and line", async () => {
    const ws = await workspaceWith(
      '[pod]\nname = "x"\n[model]\nref = "anthropic/claude-sonnet-4-5"\n[[scope.allow]]\ntarget = "missing/../../etc"\npermission = "read"\n',
    );
    const result = await runBin(["prompt", "render"], { cwd: ws, env: env() });
    expectOneLineError(
      result,
      /manifest\.toml:6: scope\.allow\[0\]\.target: cannot be used/,
      /fix the key shown/,
    );
  });

  it("a scope denial during a turn: a ✗ line with a hint naming the key to change, the model gets the denial, the run goes on", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(
      double.baseUrl,
      '[[scope.deny]]\ntarget = "../secrets"\npermission = "read"\n',
    );
    await mkdir(join(workspace, "secrets"));
    await writeFile(join(workspace, "secrets", "key.txt"), "hunter2");
    double.enqueue(
      { parts: [{ type: "tool_call", name: "read_file", arguments: { path: "secrets/key.txt" } }] },
      { parts: [{ type: "text", text: "I may not read that file." }] },
    );
    const result = await runBin(["run", "show me the key"], { cwd: workspace, env: env() });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const denial = lines.findIndex((line) => line.startsWith("✗ read_file(secrets/key.txt)"));
    expect(lines.filter((line) => line.startsWith("✗ read_file(secrets/key.txt)"))).toHaveLength(1);
    expect(lines[denial]).toMatch(/denied by the deny rule on ".*secrets" \(read\)/);
    expect(lines[denial + 1]).toMatch(
      /^ {2}hint: the \[\[scope\.deny\]\] rule on ".*secrets" \(permission = "read"\) refuses it; narrow or remove that rule/,
    );
    expect(result.stdout).toContain("I may not read that file.");
    expect(result.stdout).not.toContain("hunter2");
    expect(JSON.stringify(double.requests[1]?.body.messages)).not.toContain("hunter2");
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("a write outside the scope: the ✗ line's hint names [[scope.allow]] with write permission, in text and --json", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl);
    // The scope is the workspace; its parent directory is outside it.
    const outside = join(wsRoot, "out.txt");
    const call = {
      parts: [{ type: "tool_call", name: "write_file", arguments: { path: outside, content: "x" } }],
    } satisfies ScriptedResponse;
    const answer = { parts: [{ type: "text", text: "I cannot write there." }] } satisfies ScriptedResponse;
    double.enqueue(call, answer, call, answer);
    const text = await runBin(["run", "write it"], { cwd: workspace, env: env() });
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    const denial = lines.findIndex((line) => line.startsWith("✗ write_file("));
    expect(lines[denial]).toContain("denied: outside the scope");
    expect(lines[denial + 1]).toBe(
      `  hint: to allow it, add a [[scope.allow]] rule covering "${outside}" with permission = "write" to the manifest (docs/manifest.md, Scope)`,
    );
    const json = await runBin(["run", "write it", "--json"], { cwd: workspace, env: env() });
    const end = json.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((event) => event.type === "tool_call_end");
    expect(end).toMatchObject({ isError: true, hint: expect.stringContaining("[[scope.allow]]") });
    expect(existsSync(outside)).toBe(false);
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("a turn that reaches [worker] max_turns: exit 3, one error line and a hint to resume or raise the limit", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl, "[worker]\nmax_turns = 1\n");
    await writeFile(join(workspace, "notes.txt"), "a note");
    double.enqueue(
      { parts: [{ type: "tool_call", name: "read_file", arguments: { path: "notes.txt" } }] },
      { parts: [{ type: "text", text: "never requested" }] },
    );
    const result = await runBin(["run", "read the notes"], { cwd: workspace, env: env() });
    expect(result.code).toBe(3);
    expect(double.requests).toHaveLength(1);
    const sessionId = /podkit resume (\S+)$/m.exec(result.stderr)?.[1] as string;
    const [error, hint, ...rest] = result.stderr.trimEnd().split("\n");
    expect(error).toBe("error: the turn ended without a final answer: limit_reached");
    expect(hint).toBe(
      `hint: the run used all 1 model requests of [worker] max_turns; continue with \`podkit resume ${sessionId}\` or raise max_turns in the manifest`,
    );
    expect(rest).toEqual([`session ${sessionId} · continue it with: podkit resume ${sessionId}`]);
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("run without a prompt and without any input to read (no stdin): one error line and a hint", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl);
    let stderr = "";
    const io = {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      env: env(),
      cwd: workspace,
    };
    expect(await main(["run"], io)).toBe(2);
    const [error, hint] = stderr.trimEnd().split("\n");
    expect(error).toBe("error: no prompt given and no input to read one from");
    expect(hint).toMatch(/^hint: give the prompt as an argument .*or pipe lines into stdin$/);
    expect(double.requests).toHaveLength(0);
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("a corrupt session log: names file and line, and the hinted fork continues from the last good turn", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl);
    double.enqueue(
      { parts: [{ type: "text", text: "first answer" }] },
      { parts: [{ type: "text", text: "second answer" }] },
    );
    const first = await runBin(["run", "one"], { cwd: workspace, env: env() });
    const sessionId = /podkit resume (\S+)/.exec(first.stderr)?.[1] as string;
    expect((await runBin(["resume", sessionId, "two"], { cwd: workspace, env: env() })).code).toBe(0);

    const dir = join(workspace, ".podkit", "sessions", sessionId);
    const [segment] = await readdir(dir);
    const file = join(dir, segment as string);
    const lines = (await readFile(file, "utf8")).split("\n");
    const secondInvoke = lines.findLastIndex((line) => line.includes('"kind":"invoke"'));
    lines[secondInvoke + 1] = '{"kind":"user_input","ts":1,"text":"tampered"';
    await writeFile(file, lines.join("\n"));

    for (const args of [
      ["resume", sessionId, "three"],
      ["session", "show", sessionId],
    ]) {
      const result = await runBin(args, { cwd: workspace, env: env() });
      expectOneLineError(
        result,
        new RegExp(`corrupt log line: .*${segment}:${secondInvoke + 2}: `),
        new RegExp(`podkit session fork ${sessionId} --at-turn 1\``),
      );
    }
    const fork = await runBin(["session", "fork", sessionId, "--at-turn", "1"], {
      cwd: workspace,
      env: env(),
    });
    expect(fork.code).toBe(0);
    const forkedId = /into session (\S+)/.exec(fork.stdout)?.[1] as string;
    const shown = await runBin(["session", "show", forkedId], { cwd: workspace, env: env() });
    expect(shown.stdout).toContain(`forked from ${segment?.replace(".jsonl", "")} at turn 1`);
    expect(shown.stdout).toContain('· "one"');
    expect(shown.stdout).not.toContain('"two"');
    await rm(wsRoot, { recursive: true, force: true });
  });
});

// The hint is the one the error carries (each package's classes set their own); these go through
// the real binary for an error of each package the CLI drives.
describe("the hint printed is the one the error carries", () => {
  it("llm-worker: a provider that refuses the key names [model] api_key_env", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl);
    double.enqueue({ fault: { kind: "status", status: 401, body: "invalid x-api-key" } });
    const result = await runBin(["run", "hello"], { cwd: workspace, env: env() });
    const [error, hint] = result.stderr.split("\n");
    expect(result.code).toBe(1);
    expect(error).toMatch(/^error: anthropic answered HTTP 401/);
    expect(hint).toBe("hint: the provider refused the API key: check the variable [model] api_key_env names");
    expect(result.stderr).not.toMatch(/^\s+at /m);
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("session-store: an unknown session points at podkit session list", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl, "[memory]\n");
    const missing = "0190aaaa-0000-7000-8000-000000000000";
    const result = await runBin(["memory", "extract", missing], { cwd: workspace, env: env() });
    const lines = result.stderr.trimEnd().split("\n");
    expect(result.code).toBe(1);
    expect(lines.at(-2)).toBe(`error: session ${missing} not found in ${workspace}/.podkit/sessions`);
    expect(lines.at(-1)).toBe("hint: `podkit session list` shows this workspace's sessions");
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("pod: a prompt pack that cannot be read points at podkit prompt catalog --explain", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(double.baseUrl);
    await writeFile(join(workspace, ".podkit", "prompts.toml"), Buffer.from([0x5b, 0xff, 0x5d]));
    const result = await runBin(["prompt", "render"], { cwd: workspace, env: env() });
    expectOneLineError(
      result,
      /workspace prompt pack .*prompts\.toml: the file is not valid UTF-8/,
      /^hint: fix the prompt pack named above; `podkit prompt catalog --explain` shows each layer's values$/,
    );
    await rm(wsRoot, { recursive: true, force: true });
  });

  it("pod: a bad $prefix reference in the system prompt says how references are written", async () => {
    const { workspace, root: wsRoot } = await doubleWorkspace(
      double.baseUrl,
      `[worker]\nsystem_prompt = '{% include "$podkit/../secrets" %}'\n`,
    );
    const result = await runBin(["prompt", "render"], { cwd: workspace, env: env() });
    expectOneLineError(
      result,
      /invalid prompt reference "\$podkit\/\.\.\/secrets"/,
      /"\$podkit\/…", "\$user\/…"/,
    );
    await rm(wsRoot, { recursive: true, force: true });
  });
});
