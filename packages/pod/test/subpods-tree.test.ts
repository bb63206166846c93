import { describe, expect, it } from "vitest";
import type { PodEvent } from "../src/pod/events.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, TREE_MANIFEST, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();

describe("sub-pods: a tree of three levels", () => {
  it("root → worker → reviewer: answers flow up, every child is a session with its lineage, events carry the pod path", async () => {
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "worker", task: "implement it" }, "call-root-1"),
        text("root done"),
      ],
      WORKER: [
        toolCall("spawn_pod", { role: "reviewer", task: "review it" }, "call-worker-1"),
        text("worker done"),
      ],
      REVIEWER: [text("LGTM")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      files: { "project/src/a.ts": "export {}\n" },
      double: { respond: route.respond },
    });
    const root = await w.pod();
    const events: PodEvent[] = [];
    root.subscribe((event) => events.push(event));
    const result = await root.run("build and review").result;
    expect(result.text).toBe("root done");

    const sessions = await entriesBySession(w.workspace);
    expect(sessions.size).toBe(3);
    const rootId = root.sessionId as string;
    const [workerInfo] = await root.children();
    expect(workerInfo).toMatchObject({
      role: "worker",
      depth: 1,
      callId: "call-root-1",
      status: "idle",
      turns: 1,
    });
    const workerId = workerInfo?.sessionId as string;
    const workerStart = sessions.get(workerId)?.[0];
    expect(workerStart).toMatchObject({
      kind: "segment_start",
      system_prompt: expect.stringMatching(/^WORKER/),
      parent: { session_id: rootId, call_id: "call-root-1", role: "worker", depth: 1 },
    });
    const reviewer = [...sessions.entries()].find(([, entries]) => {
      const start = entries[0];
      return start?.kind === "segment_start" && start.parent?.role === "reviewer";
    });
    expect(reviewer?.[1][0]).toMatchObject({
      parent: { session_id: workerId, call_id: "call-worker-1", role: "reviewer", depth: 2 },
    });

    // The reviewer's answer reached the worker, and the worker's the root, as tool results.
    const workerResult = toolResults(sessions.get(workerId) ?? [])[0];
    expect(JSON.parse(workerResult?.summary ?? "{}")).toMatchObject({ role: "reviewer", answer: "LGTM" });
    const rootResult = toolResults(sessions.get(rootId) ?? [])[0];
    expect(JSON.parse(rootResult?.summary ?? "{}")).toMatchObject({
      id: workerId,
      role: "worker",
      answer: "worker done",
      usage: { requests: 2 },
    });

    const paths = new Set(events.flatMap((e) => (e.type === "subpod" ? [e.path] : [])));
    expect([...paths].sort()).toEqual(["root › worker#1", "root › worker#1 › reviewer#1"]);
    const reviewerText = events.find(
      (e) => e.type === "subpod" && e.event.type === "text_delta" && e.path.endsWith("reviewer#1"),
    );
    expect(reviewerText).toBeDefined();
  });

  it("Pod.restore of the parent sees its children (from the store), and pod.children is empty without roles", async () => {
    const route = routeBySystemPrompt({
      ROOT: [toolCall("spawn_pod", { role: "reviewer", task: "look" }, "call-r"), text("ok")],
      REVIEWER: [text("fine")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    await root.run("go").result;
    const rootId = root.sessionId as string;
    await root.close();
    const restored = await w.restore(rootId);
    const children = await restored.children();
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({
      role: "reviewer",
      depth: 1,
      callId: "call-r",
      status: "stored",
      turns: 1,
    });
  });

  it("interrupting the parent interrupts its foreground child; closing the parent stops a background one", async () => {
    const stalled = (words: string) => ({
      parts: [{ type: "text" as const, text: words }],
      fault: { kind: "stall" as const, afterEvents: 3, ms: 60000 },
    });
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "reviewer", task: "slow review" }, "fg"),
        toolCall("spawn_pod", { role: "reviewer", task: "background review", background: true }, "bg"),
        text("started it"),
      ],
      REVIEWER: [stalled("thinking"), stalled("still thinking")],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: TREE_MANIFEST,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    // Resolved when the n-th child (0: foreground, 1: background) first streams.
    const resolvers: (() => void)[] = [];
    const streaming = [0, 1].map(
      (n) =>
        new Promise<void>((resolve) => {
          resolvers[n] = resolve;
        }),
    );
    const seen = new Set<string>();
    root.subscribe((e) => {
      if (e.type !== "subpod" || e.event.type !== "text_delta" || seen.has(e.sessionId)) return;
      seen.add(e.sessionId);
      resolvers[seen.size - 1]?.();
    });
    const first = root.run("review in the foreground");
    await streaming[0];
    root.interrupt();
    await expect(first.result).rejects.toThrow();
    const [foreground] = await root.children();
    expect(foreground?.status).toBe("failed");
    // Interrupted before any output was committed: the child's task stays, its turn closed.
    const entries = await entriesBySession(w.workspace);
    expect(entries.get(foreground?.sessionId as string)?.map((e) => e.kind)).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "run_errored",
    ]);

    await root.run("now in the background").result;
    await streaming[1];
    const background = (await root.children()).find((c) => c.callId === "bg");
    expect(background?.status).toBe("running");
    // Its response stalls for a minute, beyond the test's timeout: close returns only because it stopped the child.
    await root.close();
    const closed = await entriesBySession(w.workspace);
    expect(closed.get(background?.sessionId as string)?.map((e) => e.kind)).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "run_errored",
    ]);
  });
});
