import { AbortedError } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { PodBusyError } from "../src/index.js";
import type { PodEvent } from "../src/pod/events.js";
import {
  compactionTable,
  compactRequests,
  compactResponder,
  eventsOf,
  isCompactRequest,
  lookupTools,
  mainRequests,
  ofType,
} from "./compaction-harness.js";
import { readAllSegments, systemOf, text, toolCall, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

/** A request's messages without cache-control markers (breakpoints move from request to request by design). */
function withoutCacheControl(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (key, member) => (key === "cache_control" ? undefined : member));
}
const call = (name: string, args: Record<string, unknown>) => ({
  parts: [{ type: "tool_call" as const, name, arguments: args }],
});

/** No automatic compaction (thresholds far away); a small retained part so there is something to compact. */
const manualOnly = compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 40 });

describe("pod.compact() and restore", () => {
  it("compacts on request into a new segment, reporting start and done; skipped before the first run; busy during a run", async () => {
    const w = await world({
      manifestExtra: manualOnly,
      double: { measureInputTokens: true, respond: compactResponder({ summary: "what happened so far" }) },
    });
    const pod = await w.pod();
    expect(await pod.compact()).toEqual({ status: "skipped", reason: "no_session" });
    w.double.enqueue(text("a"), text("b"), text("c"));
    await pod.run("one");
    await pod.run("two");
    const before = pod.segmentId;
    const events: PodEvent[] = [];
    const outcome = await pod.compact({ onEvent: (event) => events.push(event) });
    expect(outcome).toMatchObject({ status: "compacted", fromSegmentId: before, toSegmentId: pod.segmentId });
    expect(events.map((event) => event.type)).toEqual(["compaction_start", "compaction_done"]);
    expect(events[0]).toEqual({ type: "compaction_start", reason: "manual" });
    expect(pod.usage).toEqual([]);
    const running = pod.run("three");
    await expect(pod.compact()).rejects.toSatisfy(PodBusyError.isInstance);
    await running;
    const [, , third] = mainRequests(w.double.requests);
    expect(systemOf(third as never)).toBe(pod.systemPrompt);
    expect(JSON.stringify(third?.body.messages)).toContain("what happened so far");
  });

  it("a restore in the middle of a compacted session continues in the new segment", async () => {
    const w = await world({
      manifestExtra: manualOnly,
      double: { measureInputTokens: true, respond: compactResponder({ summary: "the compacted past" }) },
    });
    const pod = await w.pod();
    w.double.enqueue(text("a"), text("b"), text("c"), text("d"));
    await pod.run("one");
    await pod.run("two");
    await pod.compact();
    await pod.run("three");
    const restored = await w.restore(pod.sessionId as string);
    expect(restored.segmentId).toBe(pod.segmentId);
    expect(restored.history).toEqual(pod.history);
    expect(restored.turn).toBe(3);
    await restored.run("four");
    const [, , beforeRestore, afterRestore] = mainRequests(w.double.requests);
    // The restored pod sends what the live one sent, plus the new turn.
    const sent = (request: typeof beforeRestore) => withoutCacheControl(request?.body.messages) as unknown[];
    const previous = sent(beforeRestore);
    expect(sent(afterRestore).slice(0, previous.length)).toEqual(previous);
    expect(systemOf(afterRestore as never)).toBe(pod.systemPrompt);
    const segments = await readAllSegments(w.workspace);
    expect(segments.size).toBe(2);
    const newest = [...segments.entries()].find(([id]) => id.endsWith(pod.segmentId as string))?.[1];
    expect(
      newest?.filter((entry) => entry.kind === "user_input").map((entry) => (entry as { text: string }).text),
    ).toEqual(["three", "four"]);
  });

  it("threshold: a session over `threshold` compacts before the next turn starts (best-effort, in the prelude)", async () => {
    // The first turn leaves about 760 tokens; the compacted history (summary + retained tail) about 220.
    const w = await world({
      manifestExtra: compactionTable({ threshold: 400, request_threshold: 100000, retained_tokens: 30 }),
      double: { measureInputTokens: true, respond: compactResponder({ summary: "short past" }) },
    });
    const pod = await w.pod();
    w.double.enqueue(text("a ".repeat(200)), text("b"));
    await pod.run("one");
    const first = pod.segmentId;
    const handle = pod.run("two");
    const events = await eventsOf(handle);
    expect(ofType(events, "compaction_start")).toEqual([{ type: "compaction_start", reason: "threshold" }]);
    expect(ofType(events, "compaction_failed")).toEqual([]);
    const types = events.map((event) => event.type);
    const done = types.indexOf("compaction_done");
    expect(done).toBeGreaterThanOrEqual(0);
    expect(done).toBeLessThan(types.indexOf("turn_start"));
    expect(pod.segmentId).not.toBe(first);
    const segments = await readAllSegments(w.workspace);
    expect(segments.size).toBe(2);
    const old = [...segments.entries()].find(([id]) => id.endsWith(first as string))?.[1];
    expect(old?.at(-1)).toMatchObject({ kind: "run_completed", result: "finished" });
    const next = [...segments.entries()].find(([id]) => id.endsWith(pod.segmentId as string))?.[1];
    expect(next?.[1]).toMatchObject({ kind: "invoke", trigger: "user" });
    expect(next?.filter((entry) => entry.kind === "user_input")).toMatchObject([{ text: "two" }]);
  });

  it("the compaction worker reads items, searches, reads files in scope only, marks files and adds references", async () => {
    const w = await world({
      manifestExtra: `${manualOnly}\n[[scope.allow]]\ntarget = ".."\npermission = "read"`,
      files: {
        "project/plan.md": "step 1: lookups\nstep 2: answers\n",
        "secret.txt": "TOP-SECRET-CONTENT\n",
      },
      double: {
        measureInputTokens: true,
        respond: compactResponder({
          script: [
            call("read_session_items", { from: 0, to: 1 }),
            call("search_session_log", { query: "SECOND" }),
            call("read_file", { path: "../secret.txt" }),
            call("mark_read_required", { path: "plan.md" }),
            call("add_reference", { target: "README.md", note: "project overview" }),
            call("write_summary", { summary: "the plan is being followed" }),
            text("done"),
          ],
        }),
      },
    });
    const pod = await w.pod();
    w.double.enqueue(text("first answer"), text("second answer"), text("third answer"));
    await pod.run("the first question");
    await pod.run("the second question");
    await pod.run("the third question");
    await pod.compact();
    const seen = compactRequests(w.double.requests).map((request) => JSON.stringify(request.body.messages));
    expect(seen[1]).toContain("#0 [user] the first question");
    expect(seen[2]).toContain("the second question");
    expect(seen[3]).not.toContain("TOP-SECRET-CONTENT");
    expect(seen[3]).toContain("is_error");
    const history = JSON.stringify(pod.history);
    expect(history).toContain("[File loaded after compaction: plan.md]");
    expect(history).toContain("step 2: answers");
    expect(history).toContain("README.md: project overview");
    expect(history).toContain("the plan is being followed");
    expect(history).not.toContain("the first question");
  });

  it("an interrupt during a mid-turn compaction leaves the old segment closed and unchanged; resume() finishes the turn", async () => {
    const answer = compactResponder({ summary: "after the interrupt" });
    const holder: { pod?: { interrupt(): void } } = {};
    let stalled = false;
    const w = await world({
      manifestExtra: compactionTable({ threshold: 700, request_threshold: 700, retained_tokens: 100 }),
      toolPackages: [lookupTools(400)],
      double: {
        measureInputTokens: true,
        respond: (request) => {
          if (!isCompactRequest(request) || stalled) return answer(request);
          stalled = true;
          // The compaction worker's request is in flight and stalls: interrupt the run now.
          setImmediate(() => holder.pod?.interrupt());
          return {
            parts: [{ type: "text", text: "." }],
            fault: { kind: "stall", afterEvents: 0, ms: 60_000 },
          };
        },
      },
    });
    const pod = await w.pod();
    holder.pod = pod;
    let interruptedIn: number | undefined;
    for (let turn = 1; turn <= 10 && interruptedIn === undefined; turn++) {
      w.double.enqueue(toolCall("lookup", { q: `item ${turn}` }), text(`answer ${turn}`));
      const handle = pod.run(`look up item ${turn}`);
      try {
        await handle;
      } catch (error) {
        expect(AbortedError.isInstance(error)).toBe(true);
        interruptedIn = turn;
      }
    }
    expect(interruptedIn).toBeDefined();
    const before = await readAllSegments(w.workspace);
    expect(before.size).toBe(1);
    const old = [...before.values()][0] ?? [];
    expect(old.at(-1)).toMatchObject({ kind: "run_completed", result: "yielded" });
    expect(pod.compactionDisabled).toBe(false);
    const resumed = await pod.resume();
    expect(resumed.status).toBe("finished");
    expect(resumed.text).toBe(`answer ${interruptedIn}`);
    const after = await readAllSegments(w.workspace);
    expect(after.size).toBe(2);
    expect(after.get([...before.keys()][0] as string)).toEqual(old);
  });

  it("a hook's yield ends the run as yielded and is not taken for a compaction request", async () => {
    const w = await world({
      manifestExtra: manualOnly,
      double: { measureInputTokens: true, respond: compactResponder({ summary: "unused" }) },
    });
    const pod = await w.pod();
    let yielded = false;
    pod.addHooks({
      preRequest: () => {
        if (yielded) return { action: "continue" };
        yielded = true;
        return { action: "yield" };
      },
    });
    w.double.enqueue(text("after the yield"));
    expect((await pod.run("one")).status).toBe("yielded");
    expect((await pod.resume()).text).toBe("after the yield");
    expect(compactRequests(w.double.requests)).toEqual([]);
    expect((await readAllSegments(w.workspace)).size).toBe(1);
  });
});
