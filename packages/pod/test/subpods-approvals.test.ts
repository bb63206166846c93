import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../src/index.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, TREE_MANIFEST, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();

// Every pod of the tree may run bash; the builtin policy asks about each call.
const BASH_TREE = `[tools]\nbash = true\n${TREE_MANIFEST}
[subpods.worker.tools]
bash = true
[subpods.reviewer.tools]
bash = true
`;

/** root → worker → reviewer, where the reviewer makes one bash call. */
function reviewerRunsBash() {
  return routeBySystemPrompt({
    ROOT: [toolCall("spawn_pod", { role: "worker", task: "implement it" }, "call-root"), text("root done")],
    WORKER: [
      toolCall("spawn_pod", { role: "reviewer", task: "review it" }, "call-worker"),
      text("worker done"),
    ],
    REVIEWER: [toolCall("bash", { command: "echo reviewed" }, "call-bash"), text("reviewed it")],
  });
}

function approvalEntries(sessions: Map<string, Entry<Item>[]>) {
  return [...sessions.values()].flat().filter((e) => e.kind.startsWith("approval_"));
}

describe("sub-pods: a child's approval reaches the person who answers the root's", () => {
  it("the reviewer's bash call is asked of the root's approver, naming the child; allowed, it runs and is logged in the child", async () => {
    const route = reviewerRunsBash();
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: BASH_TREE,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: route.respond },
    });
    const asked: ApprovalRequest[] = [];
    const root = await w.pod({
      approver: (request) => {
        asked.push(request);
        return { decision: "allow", by: "alice" };
      },
    });
    expect((await root.run("build and review").result).text).toBe("root done");

    expect(asked.map((r) => [r.tool, r.podPath])).toEqual([["bash", ["root", "worker#1", "reviewer#1"]]]);
    const sessions = await entriesBySession(w.workspace);
    expect(approvalEntries(sessions)).toMatchObject([
      { kind: "approval_requested", call_id: "call-bash", pod_path: ["root", "worker#1", "reviewer#1"] },
      { kind: "approval_answered", call_id: "call-bash", decision: "allow", by: "alice", in_run: true },
    ]);
    const reviewer = [...sessions.values()].find((entries) => {
      const start = entries[0];
      return start?.kind === "segment_start" && start.parent?.role === "reviewer";
    });
    expect(toolResults(reviewer ?? [])).toMatchObject([{ isError: false }]);
  });

  it("denied, the reviewer's model gets the call's error result with the reason", async () => {
    const route = reviewerRunsBash();
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: BASH_TREE,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: route.respond },
    });
    const root = await w.pod({ approver: () => ({ decision: "deny", reason: "not in review", by: "bob" }) });
    await root.run("build and review").result;
    const reviewerRequest = JSON.stringify(route.requests.REVIEWER?.at(-1)?.body);
    expect(reviewerRequest).toContain("not in review");
    const sessions = await entriesBySession(w.workspace);
    expect(approvalEntries(sessions)).toMatchObject([
      { kind: "approval_requested", pod_path: ["root", "worker#1", "reviewer#1"] },
      { kind: "approval_answered", decision: "deny", by: "bob" },
    ]);
  });
});
