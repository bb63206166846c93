import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { ScriptedPart } from "@podkit/testkit";
import { describe, expect, it } from "vitest";
import { testTools, text, toolCall, usePodWorlds, type World } from "./pod-harness.js";
import { entriesBySession, routeBySystemPrompt } from "./subpods-harness.js";

const world = usePodWorlds();
const RESUME = fileURLToPath(new URL("./crash/budget-root.mjs", import.meta.url));

/** Every request's tokens (input + output) as the logs of every session record them. */
async function recordedRequests(workspace: string): Promise<number[]> {
  const tokens: number[] = [];
  for (const entries of (await entriesBySession(workspace)).values()) {
    for (const e of entries) if (e.kind === "llm_usage") tokens.push(e.input_tokens + e.output_tokens);
  }
  return tokens;
}

/** Runs the root (restored when `sessionId` is given) for one turn in a new process; its result. */
async function runInNewProcess(w: World, sessionId?: string) {
  const args = [
    RESUME,
    w.workspace,
    w.home,
    w.double.baseUrl,
    ...(sessionId === undefined ? [] : [sessionId]),
  ];
  const { stdout } = await promisify(execFile)(process.execPath, args);
  return JSON.parse(stdout) as {
    sessionId: string;
    status: string;
    stopReason?: { kind: string };
    budget?: { cap: string };
  };
}

describe("[budget]", () => {
  it("a run that would pass run_tokens stops before the request with budget_exhausted, recorded in the log", async () => {
    const w = await world({
      manifestExtra: "[budget]\nrun_tokens = 1500",
      toolPackages: [testTools({ look: () => "x".repeat(2000) })],
      double: { measureInputTokens: true },
    });
    for (let i = 0; i < 10; i++) w.double.enqueue(toolCall("look"));
    const pod = await w.pod();
    const result = await pod.run("look around").result;
    expect(result.status).toBe("budget_exhausted");
    expect(result.stopReason).toEqual({ kind: "budget_exhausted", raw: undefined });
    expect(result.budget).toMatchObject({ cap: "run_tokens", limit: 1500 });
    const spent = (await recordedRequests(w.workspace)).reduce((a, b) => a + b, 0);
    expect(spent).toBeLessThanOrEqual(1500);
    expect(spent + (result.budget?.estimate ?? 0)).toBeGreaterThan(1500);
    // Never a half-sent request: every request the double saw is recorded.
    expect(w.double.requests).toHaveLength(result.usage.length);
    const [entries] = (await entriesBySession(w.workspace)).values();
    // The cap and the run's end, in one write: the log's own status says what stopped it.
    expect(entries?.at(-2)).toMatchObject({
      kind: "extension",
      domain: "budget",
      payload: { cap: "run_tokens" },
    });
    expect(entries?.at(-1)).toMatchObject({ kind: "run_completed", result: "budget_exhausted" });
  });

  it("wall time: a run past run_wall_ms stops before its next request; a session past session_wall_ms before its first", async () => {
    // Each answer takes `ms`; the caps leave seconds of room for the rest of a run's work, so a
    // busy machine cannot push a run over a cap it should stay under.
    const slow = (part: ScriptedPart, ms: number) => ({
      parts: [part],
      fault: { kind: "stall" as const, afterEvents: 1, ms },
    });
    const w = await world({
      manifestExtra: "[budget]\nrun_wall_ms = 2000\nsession_wall_ms = 6000",
      toolPackages: [testTools({ look: () => "seen" })],
    });
    const pod = await w.pod();
    w.double.enqueue(slow({ type: "tool_call", name: "look", arguments: {} }, 2500));
    const first = await pod.run("look slowly").result;
    expect(first.budget).toMatchObject({ cap: "run_wall_ms", limit: 2000 });
    expect(w.double.requests).toHaveLength(1);
    w.double.enqueue(slow({ type: "text", text: "slow answer" }, 4000));
    // Control: a new run starts its run clock again and is served (the session has spent ~2.5 s of 6).
    expect((await pod.run("answer slowly").result).text).toBe("slow answer");
    const third = await pod.run("and now?").result;
    expect(third.budget).toMatchObject({ cap: "session_wall_ms", limit: 6000 });
    expect(w.double.requests).toHaveLength(2);
  });

  it("a fan-out of 5 children stops at the tree cap, over it by at most one request, and a new process keeps the count", async () => {
    const CAP = 12000;
    const manifest = `
[budget]
tree_tokens = ${CAP}
[subpods.worker]
description = "works"
max_concurrent = 5
[subpods.worker.worker]
system_prompt = "WORKER"
`;
    const spawns = Array.from({ length: 5 }, (_, i) => ({
      type: "tool_call" as const,
      name: "spawn_pod",
      arguments: { role: "worker", task: `part ${i}`, background: true },
    }));
    const route = routeBySystemPrompt({
      ROOT: [{ parts: spawns }, text("all five started")],
      WORKER: Array.from({ length: 200 }, () => toolCall("list_pods")),
    });
    const w = await world({
      systemPrompt: "ROOT",
      manifestExtra: manifest,
      double: { respond: route.respond, measureInputTokens: true },
    });
    const root = await w.pod();
    let ended = 0;
    const allEnded = new Promise<void>((resolve) =>
      root.subscribe((e) => {
        if (e.type === "subpod" && e.event.type === "run_end" && ++ended === 5) resolve();
      }),
    );
    await root.run("split the work five ways").result;
    await allEnded;
    const requests = await recordedRequests(w.workspace);
    const total = requests.reduce((a, b) => a + b, 0);
    const oneRequest = Math.max(...requests);
    expect(total).toBeLessThanOrEqual(CAP + oneRequest);
    expect(total).toBeGreaterThan(CAP - oneRequest);
    const children = await root.children();
    expect(children).toHaveLength(5);
    const sessions = await entriesBySession(w.workspace);
    const stoppedByTree = children.filter((c) =>
      sessions.get(c.sessionId)?.some((e) => e.kind === "extension" && e.domain === "budget"),
    );
    expect(stoppedByTree.length).toBeGreaterThan(0);
    const rootId = root.sessionId as string;
    await root.close();

    // A new process restores the root: the tree's spending is read from the logs, so it stops at once.
    const before = w.double.requests.length;
    const resumed = await runInNewProcess(w, rootId);
    expect(resumed).toMatchObject({
      status: "budget_exhausted",
      stopReason: { kind: "budget_exhausted" },
      budget: { cap: "tree_tokens" },
    });
    expect(w.double.requests.length).toBe(before);
    // Control: a new tree under the same cap has spent nothing and is served.
    route.scripts.ROOT?.push(text("fresh tree"));
    const fresh = await runInNewProcess(w);
    expect(fresh).toMatchObject({ status: "finished" });
    expect(w.double.requests.length).toBe(before + 1);
  });
});
