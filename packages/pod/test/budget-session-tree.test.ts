import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { ScriptedResponse } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt, toolResults } from "./subpods-harness.js";

const world = usePodWorlds();
const RESTORE_AND_RUN = fileURLToPath(new URL("./crash/budget-root.mjs", import.meta.url));

/** Restores session `sessionId` in a new process and runs one turn there; its result. */
async function runRestoredInNewProcess(w: World, sessionId: string) {
  const args = [RESTORE_AND_RUN, w.workspace, w.home, w.double.baseUrl, sessionId];
  const { stdout } = await promisify(execFile)(process.execPath, args);
  return JSON.parse(stdout) as {
    status: string;
    stopReason?: { kind: string };
    budget?: { cap: string; limit: number; spent: number };
  };
}

/** An answer that reports 1000 tokens (100 in, 900 out). */
const answer = (words: string): ScriptedResponse => ({
  parts: [{ type: "text", text: words }],
  usage: { inputTokens: 100, outputTokens: 900 },
});

describe("[budget] session_tokens and tree_wall_ms", () => {
  it("session_tokens counts across runs and a restore in a new process: served while under the cap, stopped at it with nothing sent", async () => {
    const w = await world({ manifestExtra: "[budget]\nsession_tokens = 2000" });
    w.double.enqueue(answer("first"), answer("second"));
    const pod = await w.pod();
    // Under the cap: the first run is served (1000 of 2000 spent).
    expect((await pod.run("one").result).text).toBe("first");
    const sessionId = pod.sessionId as string;
    await pod.close();

    // A new process restores the session: the 1000 are read from the log, the run is still under the cap.
    const second = await runRestoredInNewProcess(w, sessionId);
    expect(second).toMatchObject({ status: "finished" });
    expect(w.double.requests).toHaveLength(2);

    // Another process: 2000 spent, as the log says — the cap stops the run before its request.
    const third = await runRestoredInNewProcess(w, sessionId);
    expect(third).toMatchObject({
      status: "budget_exhausted",
      stopReason: { kind: "budget_exhausted" },
      budget: { cap: "session_tokens", limit: 2000, spent: 2000 },
    });
    expect(w.double.requests).toHaveLength(2);
    const [entries] = (await entriesBySession(w.workspace)).values();
    expect(entries?.filter((e) => e.kind === "extension" && e.domain === "budget")).toMatchObject([
      { payload: { cap: "session_tokens", spent: 2000 } },
    ]);

    // And in this process again, a restored pod keeps the count: still stopped.
    const restored = await w.restore(sessionId);
    expect((await restored.run("four").result).budget).toMatchObject({ cap: "session_tokens", spent: 2000 });
    expect(w.double.requests).toHaveLength(2);
  });

  /**
   * The root spawns a worker whose first answer takes 6 s; then both want another request. (Long
   * enough to pass a cap of 5 s that leaves the root's first request and the worker's start
   * seconds of room on a busy machine.)
   */
  async function slowWorkerTree(treeWallMs: number) {
    const route = routeBySystemPrompt({
      ROOT: [
        toolCall("spawn_pod", { role: "worker", task: "take your time" }, "call-spawn"),
        text("root done"),
      ],
      WORKER: [
        {
          parts: [{ type: "tool_call", name: "list_pods", arguments: {} }],
          fault: { kind: "stall", afterEvents: 1, ms: 6000 },
        },
        text("worker done"),
      ],
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: `[budget]\ntree_wall_ms = ${treeWallMs}\n[subpods.worker]\ndescription = "works"\n[subpods.worker.worker]\nsystem_prompt = "WORKER"\n`,
      double: { respond: route.respond },
    });
    const root = await w.pod();
    const result = await root.run("delegate it").result;
    const sessions = await entriesBySession(w.workspace);
    const rootResult = toolResults(sessions.get(root.sessionId as string) ?? [])[0];
    return { w, route, result, spawned: JSON.parse(rootResult?.summary ?? "{}") };
  }

  it("tree_wall_ms: the tree's wall time stops the child before its next request, then the root", async () => {
    const { w, route, result, spawned } = await slowWorkerTree(5000);
    // Under the cap, the root's first request and the worker's first were sent.
    expect(route.requests.ROOT).toHaveLength(1);
    expect(route.requests.WORKER).toHaveLength(1);
    expect(w.double.requests).toHaveLength(2);
    // Past it (6 s into the root's run): the worker stopped, and spawn_pod said why.
    expect(spawned).toMatchObject({ role: "worker", answer: null, stop_reason: "budget_exhausted" });
    // The root stopped too, before its second request.
    expect(result).toMatchObject({
      status: "budget_exhausted",
      stopReason: { kind: "budget_exhausted" },
      budget: { cap: "tree_wall_ms", limit: 5000 },
    });
    expect(result.budget?.spent).toBeGreaterThanOrEqual(5000);
  });

  it("control: the same tree under a tree_wall_ms it does not reach runs to its end", async () => {
    const { w, result, spawned } = await slowWorkerTree(60_000);
    expect(spawned).toMatchObject({ role: "worker", answer: "worker done" });
    expect(result).toMatchObject({ status: "finished", text: "root done" });
    expect(w.double.requests).toHaveLength(4);
  });
});
