import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit policy check` (shadow mode, docs/permissions.md) through the real binary: a session
// recorded by `podkit run` against the provider double, then replayed against new rules.

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await doubleWorkspace(double.baseUrl);
});
afterEach(async () => {
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const env = () => ({ HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
const podkit = (args: string[]) => runBin(args, { cwd: ws.workspace, env: env() });

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  parts: [{ type: "tool_call" as const, id, name, arguments: args }],
});

/** Records one turn calling read_file, bash twice and write_file (all approved); returns the session id. */
async function recordSession(): Promise<string> {
  await writeFile(join(ws.workspace, "README.md"), "readme\n");
  double.enqueue(
    call("call-read", "read_file", { path: "README.md" }),
    call("call-push", "bash", { command: "git push origin main" }),
    call("call-status", "bash", { command: "git status" }),
    call("call-write", "write_file", { path: "notes.txt", content: "x" }),
    { parts: [{ type: "text", text: "done" }] },
  );
  const run = await podkit(["run", "--yes", "do it"]);
  expect(run.code, run.stderr).toBe(0);
  return /podkit resume (\S+)/.exec(run.stderr)?.[1] as string;
}

/** Writes `new.toml` (a layer over the workspace's manifest) and returns its path. */
async function newManifest(text: string): Promise<string> {
  const file = join(ws.workspace, "new.toml");
  await writeFile(file, text);
  return file;
}

const DENY_PUSH = `[[permissions.rule]]\ntool = "bash"\nargs = { command = "git push*" }\naction = "deny"\nreason = "pushes go through CI"\n`;

describe("podkit policy check", () => {
  it("a new deny rule: one line for exactly the call it covers, a summary, exit 1", async () => {
    const sessionId = await recordSession();
    const result = await podkit(["policy", "check", sessionId, "--manifest", await newManifest(DENY_PUSH)]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toEqual([
      `✗ deny bash({"command":"git push origin main"}) [call-push] by [[permissions.rule]] tool = "bash" args = { command = "git push*" } action = "deny": pushes go through CI · session ${sessionId}`,
      'policy check (mode "default", 1 rule): 4 calls in 1 session checked; 1 would be denied, 0 asked about',
    ]);
  });

  it("positive control: the manifest the session ran with lists nothing and exits 0", async () => {
    const sessionId = await recordSession();
    const result = await podkit(["policy", "check", sessionId]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'policy check (mode "default", 0 rules): 4 calls in 1 session checked; 0 would be denied, 0 asked about\n',
    );
  });

  it("--json prints the report alone on stdout; an ask rule and --mode read_only are listed too", async () => {
    const sessionId = await recordSession();
    const asked = await podkit([
      "policy",
      "check",
      sessionId,
      "--json",
      "-m",
      await newManifest(`[[permissions.rule]]\ntool = "read_file"\naction = "ask"\n`),
    ]);
    expect(asked.code, asked.stderr).toBe(1);
    const report = JSON.parse(asked.stdout);
    expect(report.findings).toEqual([
      {
        sessionId,
        segmentId: expect.any(String),
        callId: "call-read",
        tool: "read_file",
        arguments: '{"path":"README.md"}',
        outcome: "ask",
        decidedBy: "rule",
        rule: '[[permissions.rule]] tool = "read_file" action = "ask"',
        reason: 'the rule [[permissions.rule]] tool = "read_file" action = "ask" asks',
        effect: "reads",
      },
    ]);
    expect(report).toMatchObject({ mode: "default", rules: 1, callsChecked: 4 });

    const readOnly = await podkit(["policy", "check", sessionId, "--mode", "read_only", "--json"]);
    expect(readOnly.code).toBe(1);
    const denied = JSON.parse(readOnly.stdout).findings;
    expect(denied.map((f: { callId: string }) => f.callId)).toEqual([
      "call-push",
      "call-status",
      "call-write",
    ]);
    expect(denied.every((f: { decidedBy: string }) => f.decidedBy === "mode")).toBe(true);
  });

  it("an unknown session is one error line with a hint (exit 1); a bad --mode is a usage error (exit 2)", async () => {
    const unknown = await podkit(["policy", "check", "no-such-session"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(
      /^error: session no-such-session not found in .*\nhint: .*podkit session list/,
    );
    expect(unknown.stderr).not.toContain("    at ");

    const badMode = await podkit(["policy", "check", "x", "--mode", "yolo"]);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/^error: --mode must be one of read_only, default, accept_edits, bypass/);

    const none = await podkit(["policy", "check"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^error: missing argument <session>\.\.\./);
  });

  it("a corrupt log names its file and line, never a stack trace", async () => {
    const sessionId = await recordSession();
    const dir = join(ws.workspace, ".podkit", "sessions", sessionId);
    const [segment] = await readdir(dir);
    const file = join(dir, segment as string);
    const lines = (await readFile(file, "utf8")).split("\n");
    const at = lines.findIndex((line) => line.includes('"call-push"'));
    lines[at] = (lines[at] as string).replace("git push origin main", "git push origin evil");
    await writeFile(file, lines.join("\n"));
    const result = await podkit(["policy", "check", sessionId, "--manifest", await newManifest(DENY_PUSH)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      new RegExp(`^error: session ${sessionId} has a corrupt log line: .*${segment}:${at + 1}: `),
    );
    expect(result.stderr).not.toContain("    at ");
  });
});
