import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type CapturedRequest,
  type ProviderDouble,
  type ScriptedResponse,
  startProviderDouble,
} from "@podkit/testkit";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BIN } from "./run-bin.js";
import { PtyScreen } from "./support/pty-screen.js";
import { scriptedCall as call, roleToml, scriptedText as text } from "./support/subpods.js";
import { doubleWorkspace, sessionEntries } from "./support/workspace.js";

// A tree of three levels in `podkit run` in a real terminal: root → worker → reviewer on the
// provider double, routed on each pod's system prompt. The reviewer's two bash calls are asked of
// the person, naming the reviewer; one is allowed, one denied.

vi.setConfig({ testTimeout: 120_000 });

const ROLES =
  roleToml("worker", { systemPrompt: "WORKER", bash: true }) +
  roleToml("reviewer", { systemPrompt: "REVIEWER", bash: true });

/** Each pod's queue, chosen by the system prompt the request carries (the root has the default one). */
function routed(): (request: CapturedRequest) => ScriptedResponse | undefined {
  const scripts: Record<string, ScriptedResponse[]> = {
    WORKER: [call("spawn_pod", { role: "reviewer", task: "review it" }, "call-worker"), text("worker done")],
    REVIEWER: [
      call("bash", { command: "echo allowed >> count" }, "call-allow"),
      call("bash", { command: "echo denied >> count" }, "call-deny"),
      text("reviewed"),
    ],
    ROOT: [call("spawn_pod", { role: "worker", task: "build it" }, "call-root"), text("root done")],
  };
  return (request) => {
    const system: string = request.body.system?.[0]?.text ?? "";
    const key = system.startsWith("WORKER") ? "WORKER" : system.startsWith("REVIEWER") ? "REVIEWER" : "ROOT";
    return scripts[key]?.shift();
  };
}

let double: ProviderDouble | undefined;
let screen: PtyScreen | undefined;
let root: string | undefined;
afterEach(async () => {
  screen?.kill();
  await double?.close();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** The session whose `segment_start` names `role` as its role. */
async function sessionOfRole(workspace: string, role: string): Promise<string> {
  for (const id of await readdir(join(workspace, ".podkit", "sessions"))) {
    const [start] = await sessionEntries(workspace, id);
    if ((start?.parent as { role?: string } | undefined)?.role === role) return id;
  }
  throw new Error(`no session of role ${role}`);
}

describe("sub-pods in podkit run: the person answers a grandchild's approvals", () => {
  it("root › worker#1 › reviewer#1 asks twice; allowed once (it runs once), denied once (the reviewer gets the error); both answers are in the reviewer's log", async () => {
    double = await startProviderDouble({ wire: "anthropic", respond: routed() });
    const ws = await doubleWorkspace(double.baseUrl, ROLES);
    root = ws.root;
    screen = new PtyScreen(process.execPath, [BIN, "run", "build and review"], {
      cwd: ws.workspace,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: ws.home,
        ANTHROPIC_API_KEY: "test-key",
        TERM: "xterm-256color",
      },
    });
    const lines = async () =>
      (await readFile(join(ws.workspace, "count"), "utf8").catch(() => "")).split("\n").filter(Boolean);

    await screen.waitFor(
      "root › worker#1 › reviewer#1 asks: Allow bash(echo allowed >> count)? [y]es / [n]o / [a]lways:",
    );
    expect(await lines()).toEqual([]);
    screen.type("y\r");
    await screen.waitFor("root › worker#1 › reviewer#1 asks: Allow bash(echo denied >> count)?");
    screen.type("n\r");
    await screen.waitFor("root done");
    expect(await screen.exited).toBe(0);

    // The allowed call ran exactly once; the denied one never ran.
    expect(await lines()).toEqual(["allowed"]);
    const reviewerId = await sessionOfRole(ws.workspace, "reviewer");
    const entries = await sessionEntries(ws.workspace, reviewerId);
    const path = ["root", "worker#1", "reviewer#1"];
    expect(entries.filter((e) => String(e.kind).startsWith("approval_"))).toMatchObject([
      { kind: "approval_requested", call_id: "call-allow", tool: "bash", pod_path: path },
      { kind: "approval_answered", call_id: "call-allow", decision: "allow", in_run: true },
      { kind: "approval_requested", call_id: "call-deny", tool: "bash", pod_path: path },
      { kind: "approval_answered", call_id: "call-deny", decision: "deny", in_run: true },
    ]);
    const results = entries.flatMap((e) =>
      e.kind === "tool_result" ? [e.item as { call_id: string; summary: string; is_error?: boolean }] : [],
    );
    expect(results.map((r) => [r.call_id, r.is_error === true])).toEqual([
      ["call-allow", false],
      ["call-deny", true],
    ]);
    expect(results[1]?.summary).toContain("the user denied this bash call");
    // Nothing of it was asked or logged in the root's or the worker's session.
    const workerId = await sessionOfRole(ws.workspace, "worker");
    expect(
      (await sessionEntries(ws.workspace, workerId)).some((e) => String(e.kind).startsWith("approval_")),
    ).toBe(false);
  });
});
