import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runBin } from "./run-bin.js";
import { scriptedCall as call, roleToml, scriptedText as text } from "./support/subpods.js";
import { doubleWorkspace, sessionEntries } from "./support/workspace.js";

// A child's approval without an approver (`--defer-approvals`), end to end through the `podkit`
// binary: the child's pending call ends the root's run awaiting approval, naming its pod path;
// `podkit approvals` lists it under the child; `podkit approve` answers it from the root and names
// the session to resume; `podkit resume <root>` continues the tree once, and the call runs once.

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
  it("the root's run ends awaiting the child's call, approve answers it from the root, resume continues the tree once and the call runs once", async () => {
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
    );
    const run = await podkit("run", "--defer-approvals", "get it counted");
    expect(run.code, run.stderr).toBe(4);
    const rootId = /session (\S{36})/.exec(run.stderr)?.[1] as string;
    expect(rootId).toBeDefined();
    expect(run.stderr).toContain("root › reviewer#1: bash(echo ran >> count)");
    expect(run.stderr).toContain(`podkit approve ${rootId} call-bash --allow`);
    expect(await count()).toBe(0);
    // The root's spawn_pod call has no result: it is suspended, delegated to the child.
    expect(await toolResults(ws.workspace, rootId)).toEqual([]);

    // The pending call is listed under the child's session, with its pod path (the delegated
    // request of the root's call is not something a person answers, so it is not listed).
    const listed = await podkit("approvals", "--json");
    const [pending] = JSON.parse(listed.stdout) as { sessionId: string }[];
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { callId: "call-bash", tool: "bash", podPath: ["root", "reviewer#1"] },
    ]);
    const childId = pending?.sessionId as string;
    expect(childId).not.toBe(rootId);

    // Control: resumed before the answer, the tree stops again where it was; nothing runs.
    const early = await podkit("resume", "--defer-approvals", rootId);
    expect(early.code, early.stderr).toBe(4);
    expect(await count()).toBe(0);

    const approve = await podkit("approve", rootId, "call-bash", "--allow", "--by", "carol");
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain(
      `allowed bash(echo ran >> count) [call-bash] of session ${childId}, by carol`,
    );
    expect(approve.stdout).toContain(`continue the run with: podkit resume ${rootId}`);

    double.enqueue(text("counted it"), text("the reviewer counted"));
    const resumed = await podkit("resume", rootId);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("the reviewer counted");
    expect(await count()).toBe(1);
    const [spawned] = await toolResults(ws.workspace, rootId);
    expect(spawned?.call_id).toBe("call-spawn");
    expect(JSON.parse(spawned?.summary ?? "{}")).toMatchObject({ id: childId, answer: "counted it" });

    // The child's log: the request, carol's answer, the call's one result.
    const entries = await sessionEntries(ws.workspace, childId);
    expect(entries.filter((e) => String(e.kind).startsWith("approval_"))).toMatchObject([
      { kind: "approval_requested", call_id: "call-bash", pod_path: ["root", "reviewer#1"] },
      { kind: "approval_answered", call_id: "call-bash", decision: "allow", by: "carol" },
    ]);
    expect((await toolResults(ws.workspace, childId)).map((r) => r.call_id)).toEqual(["call-bash"]);
    expect((await podkit("approvals", "--json")).stdout.trim()).toBe("[]");
    // Answered and finished: approving again is refused, and nothing continues twice.
    const twice = await podkit("approve", rootId, "call-bash", "--allow");
    expect(twice.code).toBe(1);
    expect(await count()).toBe(1);
  });
});
