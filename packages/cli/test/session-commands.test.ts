import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { FsStore, SessionLog, sessionsRoot } from "@podkit/session-store";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";
import { doubleWorkspace } from "./support/workspace.js";

// `podkit session list` and `podkit session show` on sessions written by real `podkit run`s.

let double: ProviderDouble;
let root: string;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

async function workspace() {
  const ws = await doubleWorkspace(double.baseUrl);
  root = ws.root;
  const env = { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" };
  const podkit = (...args: string[]) => runBin(args, { cwd: ws.workspace, env });
  /** `podkit run <prompt>` (or `resume <id> <prompt>`); the session id it reports. */
  const turn = async (args: string[], answer: string) => {
    double.enqueue({ parts: [{ type: "text", text: answer }] });
    const result = await podkit(...args);
    expect(result.code).toBe(0);
    return /continue it with: podkit resume (\S+)/.exec(result.stderr)?.[1] as string;
  };
  return { ...ws, podkit, turn };
}

describe("podkit session list", () => {
  it("says there are no sessions yet, and --json prints an empty array", async () => {
    const { podkit } = await workspace();
    const text = await podkit("session", "list");
    expect(text.code).toBe(0);
    expect(text.stdout).toBe("no sessions yet in this workspace (`podkit run` starts one)\n");
    const json = await podkit("session", "list", "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it("lists each session with its last activity, turns, segments and first input, in text and --json", async () => {
    const { podkit, turn } = await workspace();
    const first = await turn(["run", "summarize the\nREADME please"], "It is short.");
    await turn(["resume", first, "and the license?"], "MIT.");
    const second = await turn(["run", "list the tests"], "There are three.");

    const json = await podkit("session", "list", "--json");
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
    // Newest first, as the command's summary says.
    expect(rows.map((row) => row.sessionId)).toEqual([second, first]);
    expect(rows.find((row) => row.sessionId === first)).toEqual({
      sessionId: first,
      lastActivity: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      segments: 1,
      turns: 2,
      firstInput: "summarize the\nREADME please",
      status: "finished",
      pendingApprovals: [],
    });
    expect(rows.find((row) => row.sessionId === second)).toMatchObject({ turns: 1, segments: 1 });
    for (const row of rows)
      expect(Object.keys(row).sort()).toEqual([
        "firstInput",
        "lastActivity",
        "pendingApprovals",
        "segments",
        "sessionId",
        "status",
        "turns",
      ]);

    const text = await podkit("session", "list");
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    const firstRow = rows.find((row) => row.sessionId === first) as Record<string, unknown>;
    expect(lines).toContain(
      `${first}  ${firstRow.lastActivity}  2 turn(s)  1 segment(s)  summarize the README please`,
    );
    expect(lines.find((line) => line.startsWith(second))).toMatch(
      / {2}1 turn\(s\) {2}1 segment\(s\) {2}list the tests$/,
    );
  });
});

describe("debris in the store", () => {
  it("a session directory without a segment is left out of every listing with a warning; session doctor names it and --fix removes it", async () => {
    const { podkit, turn, workspace: cwd } = await workspace();
    const real = await turn(["run", "one"], "first answer");
    // What a crash between creating a session's directory and its first write leaves.
    const debris = "01900000-0000-7000-8000-00000000beef";
    await mkdir(join(sessionsRoot(cwd), debris), { recursive: true });
    const list = await podkit("session", "list", "--json");
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { sessionId: string }[]).map((row) => row.sessionId)).toEqual([real]);
    expect(list.stderr).toContain(`warning: session ${debris} left out: it has no segment`);
    expect((await podkit("approvals")).code).toBe(0);

    const report = await podkit("session", "doctor");
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(`session ${debris}: it has no segment`);
    expect(report.stdout).toContain("podkit session doctor --fix");
    expect(existsSync(join(sessionsRoot(cwd), debris))).toBe(true);
    const fixed = await podkit("session", "doctor", "--fix", "--json");
    expect(JSON.parse(fixed.stdout)).toEqual([
      { sessionId: debris, problem: "it has no segment", removed: true },
    ]);
    expect(existsSync(join(sessionsRoot(cwd), debris))).toBe(false);
    expect(existsSync(join(sessionsRoot(cwd), real))).toBe(true);
    expect((await podkit("session", "doctor")).stdout).toContain("no debris");
  });
});

describe("podkit session show", () => {
  it("prints the head's turns and usage, and lists another live branch of the session (text and --json)", async () => {
    const { podkit, turn, workspace: cwd } = await workspace();
    const sessionId = await turn(["run", "one"], "first answer");
    await turn(["resume", sessionId, "two"], "second answer");
    const before = JSON.parse((await podkit("session", "show", sessionId, "--json")).stdout);
    expect(before.otherBranches).toEqual([]);
    const original = before.head.segmentId as string;

    // A second branch of the same session, cut after turn 1 (the store's fork API).
    const store = new FsStore({ root: sessionsRoot(cwd) });
    const branch = await SessionLog.forkAt(store, original, 1);
    await store.close();

    const json = await podkit("session", "show", sessionId, "--json");
    expect(json.code).toBe(0);
    const shown = JSON.parse(json.stdout);
    expect(shown.sessionId).toBe(sessionId);
    // The branch was written last, so it is the head; the original is the other live branch.
    expect(shown.head).toMatchObject({
      segmentId: branch.segmentId,
      forkedFrom: { segmentId: original, atTurn: 1 },
    });
    expect(shown.otherBranches).toHaveLength(1);
    expect(shown.otherBranches[0]).toMatchObject({ segmentId: original, forkedFrom: null });
    // The line of work runs through the segment the head was forked from, then the head — the
    // same segments the session's event stream covers.
    expect(shown.segments.map((s: { info: { segmentId: string } }) => s.info.segmentId)).toEqual([
      original,
      branch.segmentId,
    ]);

    const text = await podkit("session", "show", sessionId);
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[0]).toBe(`session ${sessionId}`);
    expect(lines).toContain(
      `head segment ${branch.segmentId} (${shown.head.entryCount} entries, last written ${new Date(shown.head.lastEntryAt).toISOString()}, forked from ${original} at turn 1)`,
    );
    expect(lines).toContain(
      `other live branch ${original} (${shown.otherBranches[0].entryCount} entries, last written ${new Date(shown.otherBranches[0].lastEntryAt).toISOString()})`,
    );
    // The original segment shows the turn the head continues, never the other branch's "two".
    expect(text.stdout).toMatch(/^ {2}1\. "one" → finished$/m);
    expect(text.stdout).not.toContain('"two"');
    expect(lines.at(-2)).toMatch(/^usage: \d+ request\(s\), \d+ input tokens/);
  });

  it("the original line of work with its turns, answers and usage when there is one branch", async () => {
    const { podkit, turn } = await workspace();
    const sessionId = await turn(["run", "one"], "first answer");
    await turn(["resume", sessionId, "two"], "second answer");
    const text = await podkit("session", "show", sessionId);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ {2}1\. "one" → finished$/m);
    expect(text.stdout).toMatch(/^ {7}answer: first answer$/m);
    expect(text.stdout).toMatch(/^ {2}2\. "two" → finished$/m);
    expect(text.stdout).toMatch(/^usage: 2 request\(s\)/m);
    expect(text.stdout).not.toContain("other live branch");
  });
});
