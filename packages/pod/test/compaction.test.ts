import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { type Entry, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import {
  compactionTable,
  compactRequests,
  compactResponder,
  eventsOf,
  instructionIndex,
  lookupTools,
  mainRequests,
  ofType,
  unpairedToolResults,
} from "./compaction-harness.js";
import { readAllSegments, systemOf, text, toolCall, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();
const SUMMARY = "Goal: answer the lookups. State: every lookup so far answered; continue with the next one.";

type SegmentStart = Extract<Entry<Item>, { kind: "segment_start" }>;

/** The segments of the one session, oldest first, with their raw bytes. */
async function segments(workspace: string) {
  const all = [...(await readAllSegments(workspace)).entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  return Promise.all(
    all.map(async ([id, entries]) => ({
      id: id.split("/")[1] as string,
      entries,
      start: entries[0] as SegmentStart,
      bytes: await readFile(join(sessionsRoot(workspace), `${id}.jsonl`)),
    })),
  );
}

describe("compaction", () => {
  it("a 30-turn tool session crossing request_threshold mid-turn yields, compacts into a new segment and finishes the turn there", async () => {
    const w = await world({
      manifestExtra: compactionTable({
        threshold: 10000,
        request_threshold: 10000,
        retained_tokens: 1500,
        prune_protected_tokens: 1000000,
      }),
      toolPackages: [lookupTools(1600)],
      double: { measureInputTokens: true, respond: compactResponder({ summary: SUMMARY }) },
    });
    const pod = await w.pod();
    let compactedIn: number | undefined;
    let oldSegmentAtCompaction: Buffer | undefined;
    for (let turn = 1; turn <= 30; turn++) {
      w.double.enqueue(toolCall("lookup", { q: `item ${turn}` }), text(`answer ${turn}`));
      const handle = pod.run(`look up item ${turn}`);
      const events = await eventsOf(handle);
      const result = await handle;
      expect(result.status).toBe("finished");
      if (ofType(events, "compaction_done").length > 0) {
        expect(compactedIn).toBeUndefined();
        compactedIn = turn;
        expect(ofType(events, "compaction_start")).toEqual([
          { type: "compaction_start", reason: "request_threshold" },
        ]);
        const [done] = ofType(events, "compaction_done");
        expect(done?.tokensBefore).toBeGreaterThanOrEqual(10000);
        expect(done?.tokensAfter).toBeLessThan(10000);
        // The yield came after this turn's tool result: the turn was cut in its middle.
        const order = events.map((event) => event.type);
        expect(order).toContain("tool_call_end");
        expect(order.indexOf("tool_call_end")).toBeLessThan(order.indexOf("compaction_start"));
        expect(order.lastIndexOf("text_delta")).toBeGreaterThan(order.indexOf("compaction_done"));
        oldSegmentAtCompaction = (await segments(w.workspace))[0]?.bytes;
      }
    }
    expect(compactedIn).toBeGreaterThan(1);
    expect(compactedIn).toBeLessThan(30);

    const [old, next] = await segments(w.workspace);
    expect(next).toBeDefined();
    if (old === undefined || next === undefined) return;
    // The old segment was never touched after the compaction; its turn was closed as yielded.
    expect(old.bytes.equals(oldSegmentAtCompaction as Buffer)).toBe(true);
    expect(old.entries.at(-1)).toMatchObject({ kind: "run_completed", result: "yielded" });
    // The new segment: lineage, the same system prompt bytes, the summary first.
    expect(next.start.compacted_from).toEqual({ segment_id: old.id, at_turn: (compactedIn as number) - 1 });
    expect(
      Buffer.from(next.start.system_prompt as string).equals(Buffer.from(old.start.system_prompt as string)),
    ).toBe(true);
    expect(JSON.stringify(next.start.history[0])).toContain(SUMMARY);
    expect(JSON.stringify(next.start.history[0])).toContain("[Compacted context summary]");
    expect(next.entries[1]).toMatchObject({ kind: "invoke", trigger: "resume" });
    expect(next.entries.at(-1)).toMatchObject({ kind: "run_completed", result: "finished" });
    expect(pod.segmentId).toBe(next.id);
    expect(pod.turn).toBe(30);

    // No captured request ever sent a tool result without its call, and every main request had the same system prompt.
    for (const request of w.double.requests) expect(unpairedToolResults(request)).toEqual([]);
    const main = mainRequests(w.double.requests);
    expect(new Set(main.map((request) => systemOf(request as never))).size).toBe(1);
    expect(main).toHaveLength(60);
    expect(compactRequests(w.double.requests)).toHaveLength(2);
    // The compaction request continues the pod's conversation: its system prompt and tools, the
    // history as the pod sends it (pruned: old tool output left out), the instruction last.
    const [first] = compactRequests(w.double.requests);
    if (first === undefined) return;
    const before = w.double.requests[w.double.requests.indexOf(first) - 1] as (typeof w.double.requests)[0];
    expect(systemOf(first as never)).toBe(systemOf(before as never));
    expect(first.body.tools).toEqual(before.body.tools);
    expect(instructionIndex(first)).toBe(first.body.messages.length - 1);
    expect(JSON.stringify(first.body.messages)).toContain("found ");
  });
});
