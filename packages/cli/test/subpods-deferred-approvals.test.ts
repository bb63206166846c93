import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runBin } from "./run-bin.js";
import { scriptedCall as call, roleToml, scriptedText as text } from "./support/subpods.js";
import { doubleWorkspace, sessionEntries } from "./support/workspace.js";

// A child's approval without an approver (`--defer-approvals`), end to end through the `podkit`
// binary: the child's run ends awaiting approval, `podkit approvals` lists its call, `podkit
// approve` answers it, and the parent's `send_pod` in a later run continues the child.

vi.setConfig({ testTimeout: 180_000 });

const ROLE = roleToml("reviewer", { systemPrompt: "REVIEWER", bash: true });

let double: ProviderDouble;
let root: string;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
});
afterEach(async () => {
  await double.close();
  await rm(root, { recursive: true, force: true });
});

/** The tool results a session's log holds. */
async function toolResults(workspace: string, sessionId: string) {
  return (await sessionEntries(workspace, sessionId)).flatMap((e) =>
    e.kind === "tool_result" ? [e.item as { call_id: string; summary: string; is_error?: boolean }] : [],
  );
}

describe("sub-pods: a child's approval deferred to the person", () => {
  it("the child ends awaiting_approval, spawn_pod says so, approvals lists it under the child, approve answers it, send_pod continues the child and the call runs once", async () => {
    const ws = await doubleWorkspace(double.baseUrl, ROLE);
    root = ws.root;
    const podkit = (...args: string[]) =>
      runBin(args, { cwd: ws.workspace, env: { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" } });
    const count = async () =>
      (await readFile(join(ws.workspace, "count"), "utf8").catch(() => "")).split("\n").filter(Boolean)
        .length;

    double.enqueue(
      call("spawn_pod", { role: "reviewer", task: "count once" }, "call-spawn"),
      call("bash", { command: "echo ran >> count" }, "call-bash"),
      text("the reviewer waits for an approval"),
    );
    const run = await podkit("run", "--defer-approvals", "get it counted");
    expect(run.code, run.stderr).toBe(0);
    const rootId = /session (\S{36})/.exec(run.stdout + run.stderr)?.[1] as string;
    expect(rootId).toBeDefined();
    expect(await count()).toBe(0);

    // spawn_pod returned the child's stop reason to the parent.
    const [spawned] = await toolResults(ws.workspace, rootId);
    const child = JSON.parse(spawned?.summary ?? "{}") as { id: string; answer: null; stop_reason: string };
    expect(child).toMatchObject({ role: "reviewer", answer: null, stop_reason: "awaiting_approval" });

    // The pending call is listed under the child's session, with its pod path.
    const listed = await podkit("approvals", "--json");
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { sessionId: child.id, callId: "call-bash", tool: "bash", podPath: ["root", "reviewer#1"] },
    ]);

    // Control: before the answer, send_pod does not run the call; it says who must answer.
    double.enqueue(call("send_pod", { id: child.id, message: "go on" }, "call-early"), text("still waiting"));
    const early = await podkit("resume", rootId, "ask the reviewer again");
    expect(early.code, early.stderr).toBe(0);
    const earlyResult = (await toolResults(ws.workspace, rootId)).find((r) => r.call_id === "call-early");
    expect(earlyResult).toMatchObject({ is_error: true });
    expect(earlyResult?.summary).toContain(`podkit approve ${child.id}`);
    expect(await count()).toBe(0);

    // The child is not resumed on its own: restored from the workspace's manifest it would get the
    // root's tools and scope. Refused before anything is written (the root's resume above is the control).
    const before = await sessionEntries(ws.workspace, child.id);
    const alone = await podkit("resume", child.id);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain(
      `error: session ${child.id} is a sub-pod (reviewer, depth 1) of session ${rootId}`,
    );
    expect(alone.stderr).toContain(
      `hint: continue its tree and let the parent's send_pod continue it: podkit resume ${rootId}`,
    );
    expect(await sessionEntries(ws.workspace, child.id)).toEqual(before);

    const approve = await podkit("approve", child.id, "call-bash", "--allow", "--by", "carol");
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain(`allowed bash(echo ran >> count) [call-bash] of session ${child.id}`);
    expect(approve.stdout).toContain(`podkit resume ${rootId}`);

    double.enqueue(
      call("send_pod", { id: child.id, message: "go on" }, "call-send"),
      text("counted it"),
      text("the reviewer counted"),
    );
    const resumed = await podkit("resume", rootId, "ask the reviewer to go on");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await count()).toBe(1);
    const sent = (await toolResults(ws.workspace, rootId)).find((r) => r.call_id === "call-send");
    expect(JSON.parse(sent?.summary ?? "{}")).toMatchObject({ id: child.id, answer: "counted it" });

    // The child's log: the request, carol's answer, the call's one result, the message as a notification.
    const entries = await sessionEntries(ws.workspace, child.id);
    expect(entries.filter((e) => String(e.kind).startsWith("approval_"))).toMatchObject([
      { kind: "approval_requested", call_id: "call-bash", pod_path: ["root", "reviewer#1"] },
      { kind: "approval_answered", call_id: "call-bash", decision: "allow", by: "carol" },
    ]);
    expect((await toolResults(ws.workspace, child.id)).map((r) => r.call_id)).toEqual(["call-bash"]);
    expect(JSON.stringify(double.requests.at(-2)?.body)).toContain("go on");
    expect((await podkit("approvals", "--json")).stdout.trim()).toBe("[]");
  });
});
