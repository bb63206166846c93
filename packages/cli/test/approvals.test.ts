import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, type ScriptedResponse, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { BIN, runBin } from "./run-bin.js";
import { PtyScreen } from "./support/pty-screen.js";
import { doubleWorkspace, sessionEntries } from "./support/workspace.js";

// Durable approvals through the CLI (issue 25): real `podkit` processes, the provider double, the
// filesystem store and a real PostgreSQL server; a pty for the interactive path.

// Each case is several real processes one after another (slow on a loaded machine).
vi.setConfig({ testTimeout: 180_000 });
const database = usePostgresDatabases();
const URL_VARIABLE = "PODKIT_TEST_SESSIONS_URL";
const POSTGRES = `[session]\nstore = "postgres"\nurl_env = "${URL_VARIABLE}"\n`;

let double: ProviderDouble;
const roots: string[] = [];
let screen: PtyScreen | undefined;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  screen?.kill();
  screen = undefined;
  await double.close();
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function workspace(extra = "") {
  const ws = await doubleWorkspace(double.baseUrl, extra);
  roots.push(ws.root);
  return ws;
}

/** A bash call that leaves one line in `count` each time it really runs. */
const countingBash: ScriptedResponse = {
  parts: [{ type: "tool_call", name: "bash", arguments: { command: "echo ran >> count" } }],
};
const text = (value: string): ScriptedResponse => ({ parts: [{ type: "text", text: value }] });

/** The `podkit approve …` command a deferred run printed, as arguments. */
function printedApprove(stderr: string): string[] {
  const command = /answer: podkit (approve \S+ \S+ --allow[^\n(]*)/.exec(stderr)?.[1];
  expect(command, stderr).toBeDefined();
  return (command as string).trim().split(/\s+/);
}

const terminalEnv = (home: string) => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  ANTHROPIC_API_KEY: "test-key",
  TERM: "xterm-256color",
});

const countLines = async (dir: string) =>
  (await readFile(join(dir, "count"), "utf8").catch(() => "")).split("\n").filter(Boolean).length;

describe.each([
  { name: "filesystem", extra: "", env: async () => ({}) },
  { name: "PostgreSQL", extra: POSTGRES, env: async () => ({ [URL_VARIABLE]: await database() }) },
])(
  "podkit run --defer-approvals, approvals, approve, resume on the $name store",
  ({ name, extra, env: storeEnv }) => {
    it("exits 4 with the approve command; the command works; resume runs the call once; show lists who and when", async () => {
      const ws = await workspace(extra);
      const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", ...(await storeEnv()) };
      const podkit = (args: string[], cwd = ws.workspace) => runBin(args, { cwd, env });
      double.enqueue(countingBash);

      // Piped (no terminal), no --yes: the call is deferred, not denied.
      const run = await podkit(["run", "count once", "--defer-approvals"]);
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).toContain("the run is awaiting approval of 1 tool call(s)");
      const sessionId = /in session (\S+):/.exec(run.stderr)?.[1] as string;
      expect(run.stderr).toContain(`then continue with: podkit resume ${sessionId}`);
      expect(await countLines(ws.workspace)).toBe(0);
      expect(double.requests).toHaveLength(1);

      const listed = await podkit(["approvals", "--json"]);
      expect(listed.code, listed.stderr).toBe(0);
      const rows = JSON.parse(listed.stdout) as {
        sessionId: string;
        callId: string;
        tool: string;
        askedBy: string;
      }[];
      expect(rows).toMatchObject([{ sessionId, tool: "bash", askedBy: "bash" }]);
      if (name === "PostgreSQL") {
        // The whole store: another workspace on the same database lists the same pending call.
        const other = await workspace(extra);
        const elsewhere = await podkit(["approvals"], other.workspace);
        expect(elsewhere.stdout).toContain(`session ${sessionId}`);
        expect(elsewhere.stdout).toContain("bash(echo ran >> count)");
      }

      const approve = printedApprove(run.stderr);
      expect(approve.slice(0, 3)).toEqual(["approve", sessionId, rows[0]?.callId]);
      const answered = await podkit([...approve, "--reason", "looks safe"]);
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stdout).toContain(
        `allowed bash(echo ran >> count) [${rows[0]?.callId}] of session ${sessionId}, by `,
      );
      expect(answered.stdout).toContain(`continue the run with: podkit resume ${sessionId}`);
      const again = await podkit([...approve.slice(0, 3), "--deny", "--by", "late"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/error: call \S+ of session \S+ was already answered: allow by \S+ at /);
      expect((await podkit(["approvals"])).stdout).toContain("no tool call is awaiting approval");

      double.enqueue(text("counted once"));
      const resumed = await podkit(["resume", sessionId]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain("counted once");
      expect(await countLines(ws.workspace)).toBe(1);
      expect(JSON.stringify(double.requests[1]?.body.messages)).toContain("exit code 0");

      const show = await podkit(["session", "show", sessionId]);
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toMatch(
        /✓ approval of bash\(echo ran >> count\) \[\S+\], asked by bash: allowed by \S+ at \d{4}-\d\d-\d\dT[\d:.]+Z \(looks safe\)/,
      );
      expect(show.stdout).toMatch(/→ awaiting_approval\n/);
    });

    it("bad answers: one clear error each, nothing written", async () => {
      const ws = await workspace(extra);
      const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key", ...(await storeEnv()) };
      const podkit = (args: string[]) => runBin(args, { cwd: ws.workspace, env });
      double.enqueue({
        parts: [
          { type: "tool_call", name: "bash", arguments: { command: "echo one >> count" } },
          { type: "tool_call", name: "bash", arguments: { command: "echo two >> count" } },
        ],
      });
      const run = await podkit(["run", "twice"]);
      expect(run.code, run.stderr).toBe(4);
      const sessionId = /in session (\S+):/.exec(run.stderr)?.[1] as string;
      const before = (await podkit(["session", "show", sessionId, "--json"])).stdout;

      const several = await podkit(["approve", sessionId, "--allow"]);
      expect(several.code).toBe(2);
      expect(several.stderr).toContain("has 2 calls awaiting approval");
      expect(several.stderr).toContain("error: name the call to answer");
      const unknownCall = await podkit(["approve", sessionId, "toolu_nope", "--allow"]);
      expect(unknownCall.code).toBe(1);
      expect(unknownCall.stderr).toMatch(
        /error: session \S+ has no approval for call toolu_nope \(pending: /,
      );
      const unknownSession = await podkit([
        "approve",
        "0190aaaa-0000-7000-8000-000000000000",
        "toolu_x",
        "--allow",
      ]);
      expect(unknownSession.code).toBe(1);
      expect(unknownSession.stderr).toContain("not found");
      const both = await podkit(["approve", sessionId, "toolu_x", "--allow", "--deny"]);
      expect(both.code).toBe(2);
      expect(both.stderr).not.toContain("    at ");
      expect((await podkit(["session", "show", sessionId, "--json"])).stdout).toBe(before);
    });
  },
);

describe("the interactive approval path in a terminal", () => {
  it("y at the question runs the call, and the question and the answer are in the log", async () => {
    const ws = await workspace();
    double.enqueue(countingBash, text("ran it"));
    screen = new PtyScreen(process.execPath, [BIN, "run", "count once"], {
      cwd: ws.workspace,
      env: terminalEnv(ws.home),
    });
    await screen.waitFor("Allow bash(echo ran >> count)? [y]es / [n]o / [a]lways:");
    expect(await countLines(ws.workspace)).toBe(0);
    screen.type("y\r");
    await screen.waitFor("ran it");
    expect(await screen.exited).toBe(0);
    const sessionId = /podkit resume (\S+)/.exec(await screen.text())?.[1] as string;
    const entries = await sessionEntries(ws.workspace, sessionId);
    const kinds = entries.map((e) => e.kind);
    const asked = kinds.indexOf("approval_requested");
    // The command's file change (docs/rewind.md) is recorded between the answer and the result.
    expect(kinds.slice(asked, asked + 4)).toEqual([
      "approval_requested",
      "approval_answered",
      "extension",
      "tool_result",
    ]);
    expect(entries[asked]).toMatchObject({ tool: "bash", asked_by: "bash", pod_path: ["root"] });
    expect(entries[asked + 1]).toMatchObject({ decision: "allow", by: expect.stringMatching(/\S/) });
    expect(entries[asked + 2]).toMatchObject({
      domain: "files.changed",
      payload: { tool: "bash", changes: [{ path: "count", before: null }] },
    });
    expect(await countLines(ws.workspace)).toBe(1);
  });

  it("--defer-approvals in a terminal leaves the call pending and exits 4", async () => {
    const ws = await workspace();
    double.enqueue(countingBash);
    screen = new PtyScreen(process.execPath, [BIN, "run", "count once", "--defer-approvals"], {
      cwd: ws.workspace,
      env: terminalEnv(ws.home),
    });
    expect(await screen.exited).toBe(4);
    expect(await screen.text()).toContain("answer: podkit approve ");
    expect(await screen.text()).not.toContain("Allow bash");
    expect(existsSync(join(ws.workspace, "count"))).toBe(false);
  });
});
