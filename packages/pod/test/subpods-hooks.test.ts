import { describe, expect, it } from "vitest";
import type { HookPod, PodHooks } from "../src/index.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, TREE_MANIFEST, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();

/** root → worker → reviewer, the reviewer calling `list_pods` once. */
function threeLevels() {
  return routeBySystemPrompt({
    ROOT: [toolCall("spawn_pod", { role: "worker", task: "implement it" }, "call-root"), text("root done")],
    WORKER: [
      toolCall("spawn_pod", { role: "reviewer", task: "review it" }, "call-worker"),
      text("worker done"),
    ],
    REVIEWER: [toolCall("list_pods", {}, "call-list"), text("LGTM")],
  });
}

/** Hooks that record which pod each call was for, by hook. */
function recordingHooks(seen: { hook: string; pod: HookPod }[]): PodHooks {
  return {
    onPromptSubmit: (_input, pod) => {
      seen.push({ hook: "onPromptSubmit", pod });
      return { action: "continue" };
    },
    preRequest: (_context, pod) => {
      seen.push({ hook: "preRequest", pod });
      return { action: "continue" };
    },
    preToolCall: (_call, pod) => {
      seen.push({ hook: "preToolCall", pod });
      return { action: "continue" };
    },
    postToolCall: (_call, _result, pod) => {
      seen.push({ hook: "postToolCall", pod });
      return { action: "continue" };
    },
    onTurnEnd: (_context, pod) => {
      seen.push({ hook: "onTurnEnd", pod });
      return { action: "finish" };
    },
  };
}

describe("sub-pods: hooks can tell which pod they run for", () => {
  it("a root's own hooks see the root only; childHooks run in every child, at any depth, and see that child's path, session, role and depth", async () => {
    const route = threeLevels();
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: route.respond },
    });
    const rootSeen: { hook: string; pod: HookPod }[] = [];
    const childSeen: { hook: string; pod: HookPod }[] = [];
    const given: HookPod[] = [];
    const root = await w.pod({
      childHooks: (pod) => {
        given.push(pod);
        return recordingHooks(childSeen);
      },
    });
    root.addHooks(recordingHooks(rootSeen));
    expect((await root.run("build and review").result).text).toBe("root done");

    const rootId = root.sessionId as string;
    const [worker] = await root.children();
    const workerId = worker?.sessionId as string;
    const sessions = await entriesBySession(w.workspace);
    const reviewerId = [...sessions.keys()].find((id) => id !== rootId && id !== workerId) as string;

    // The root's hooks ran for the root only (a child never gets them), and saw who it is.
    expect(new Set(rootSeen.map((s) => s.hook))).toEqual(
      new Set(["onPromptSubmit", "preRequest", "preToolCall", "postToolCall", "onTurnEnd"]),
    );
    for (const { pod } of rootSeen)
      expect(pod).toEqual({ podPath: ["root"], sessionId: rootId, role: null, depth: 0 });

    // childHooks was asked once per child, with its identity.
    expect(given).toEqual([
      { podPath: ["root", "worker#1"], sessionId: workerId, role: "worker", depth: 1 },
      { podPath: ["root", "worker#1", "reviewer#1"], sessionId: reviewerId, role: "reviewer", depth: 2 },
    ]);
    // Each child's hooks saw that child: the worker's spawn_pod call, the reviewer's list_pods call.
    const toolCallsBy = (sessionId: string) =>
      childSeen.filter((s) => s.hook === "preToolCall" && s.pod.sessionId === sessionId).map((s) => s.pod);
    expect(toolCallsBy(workerId)).toEqual([given[0]]);
    expect(toolCallsBy(reviewerId)).toEqual([given[1]]);
    expect(
      childSeen.filter((s) => s.hook === "onPromptSubmit").map((s) => s.pod.podPath.join(" › ")),
    ).toEqual(["root › worker#1", "root › worker#1 › reviewer#1"]);
    expect(childSeen.some((s) => s.pod.sessionId === rootId)).toBe(false);
    expect(Object.isFrozen(given[0]) && Object.isFrozen(given[0]?.podPath)).toBe(true);
  });

  it("a child's hook decides for that child only: denying list_pods in the reviewer leaves the worker's calls alone", async () => {
    const route = threeLevels();
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: route.respond },
    });
    const root = await w.pod({
      childHooks: () => ({
        preToolCall: (call, pod) =>
          pod.role === "reviewer"
            ? { action: "deny", reason: `no ${call.name} in ${pod.podPath.join(" › ")}` }
            : { action: "continue" },
      }),
    });
    await root.run("build and review").result;
    const sessions = await entriesBySession(w.workspace);
    const reviewer = [...sessions.values()].find((entries) => {
      const start = entries[0];
      return start?.kind === "segment_start" && start.parent?.role === "reviewer";
    });
    expect(toolResults(reviewer ?? [])).toEqual([
      { summary: "tool call denied: no list_pods in root › worker#1 › reviewer#1", isError: true },
    ]);
    // Control: the worker's own spawn_pod call (same hooks, another pod) ran.
    const [worker] = await root.children();
    expect(toolResults(sessions.get(worker?.sessionId as string) ?? [])).toMatchObject([{ isError: false }]);
  });
});
