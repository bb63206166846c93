import type { Item } from "@podkit/llm-worker";
import type { MemoryConfig } from "@podkit/manifest";
import { type Entry, FsStore, SessionLog, sessionsRoot } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { EXTRACT_POINTER_DOMAIN } from "../src/extract/pointer.js";
import { pendingSegments } from "../src/extract/segment-chain.js";
import { attachMemory } from "../src/pod/attach-memory.js";
import { type AfterTurnJobContext, createMemoryJob } from "../src/pod/memory-job.js";
import { callTool, clock, say, stagingFiles, useMemoryWorlds } from "./helpers.js";
import { jobEvents, usePodWorlds } from "./pod-helpers.js";

// Nothing is lost between extracts: a segment's tail is extracted before the pointer moves on to
// the segment compaction started, and a session's tail when the pod closes.
const pods = usePodWorlds();
const worlds = useMemoryWorlds();
const stores: FsStore<Item>[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const EXTRACTED = {
  decisions: [{ topic: "pnpm workspace layout", decision: "Use pnpm workspaces", reason: "npm hoisting" }],
  discussions: [],
  attempts: [],
  requests: [],
};
const NOTHING = { decisions: [], discussions: [], attempts: [], requests: [] };
const COMPACTION = "[compaction]\nthreshold = 1000000\nrequest_threshold = 1000000\nretained_tokens = 1";

describe("a session that compacts below the extract threshold", () => {
  it("the old segment's tail is extracted (from its own last pointer) before the new segment's pointer is written", async () => {
    const w = await pods(
      `[memory]\nextract_threshold = 1000000\nconsolidation_threshold_files = 100\n${COMPACTION}`,
    );
    const pod = await w.pod();
    attachMemory(pod, { clock });
    w.double.enqueue(say("One package per folder."));
    await pod.run("First question: how do we lay out the repo? npm hoisting broke builds.").result;
    await pod.whenJobsIdle();
    const old = pod.segmentId;
    // Positive control: below the threshold nothing was extracted, and the old segment ends there.
    expect(await stagingFiles(w.workspace)).toEqual([]);
    const oldEntries = await w.entries(pod);
    w.double.enqueue(
      callTool("write_summary", { summary: "Asked about the layout." }),
      say("Summary written."),
    );
    expect((await pod.compact()).status).toBe("compacted");
    expect(pod.segmentId).not.toBe(old);

    w.double.enqueue(say("Second answer."), callTool("write_extracted", EXTRACTED), say("ok"));
    await pod.run("Second question.").result;
    await pod.whenJobsIdle();
    const staged = await stagingFiles(w.workspace);
    expect(staged.map((s) => s.source)).toEqual([{ segment_id: old, range: [1, oldEntries.length - 1] }]);
    const extractInput = JSON.stringify(w.double.requests.at(-2)?.body.messages);
    expect(extractInput).toContain("First question");
    expect(extractInput).not.toContain("Second question");
    // The new segment's pointer starts it at its first entry: its own turn waits for the threshold.
    expect(pod.extensions.get(EXTRACT_POINTER_DOMAIN)).toEqual({ segment_id: pod.segmentId, next_entry: 1 });
    expect(jobEvents(w.events)).toEqual(["extract:start", "extract:done"]);

    // The next turn reads nothing of the old segment again.
    const requests = w.double.requests.length;
    w.double.enqueue(say("Third answer."));
    await pod.run("Third question.").result;
    await pod.whenJobsIdle();
    expect(w.double.requests.length).toBe(requests + 1);
    expect(await stagingFiles(w.workspace)).toHaveLength(1);
  });
});

describe("a session closed cleanly and opened again", () => {
  it("is not caught up at the next open (positive control of the killed session in crash-recovery)", async () => {
    const w = await pods("[memory]\nextract_threshold = 1000000");
    const first = await w.pod();
    attachMemory(first, { clock });
    w.double.enqueue(say("First answer."));
    await first.run("First question.").result;
    await first.whenJobsIdle();
    const sessionId = first.sessionId ?? "";
    // The final pass at close extracts the tail (here: nothing worth keeping).
    w.double.enqueue(callTool("write_extracted", NOTHING), say("ok"));
    await first.close();
    expect(w.double.requests).toHaveLength(3);
    const again = await w.restore(sessionId);
    attachMemory(again, { clock });
    w.double.enqueue(say("Second answer."));
    await again.run("Second question.").result;
    await again.whenJobsIdle();
    // No catch-up extract at the next open: only the turn's own request.
    expect(w.double.requests).toHaveLength(4);
    expect(await stagingFiles(w.workspace)).toEqual([]);
  });
});

describe("the chain of segments compaction made", () => {
  const entries = (segmentId: string, count: number, extra: Partial<Entry<Item>>[] = []) =>
    [
      { kind: "segment_start", segment_id: segmentId },
      ...Array.from({ length: count - 1 - extra.length }, () => ({ kind: "user_input", text: "x" })),
      ...extra,
    ] as Entry<Item>[];
  const reader = (segments: Record<string, Entry<Item>[]>) => ({
    async *readFrom(segmentId: string, from: number) {
      yield* (segments[segmentId] ?? []).slice(from);
    },
  });
  const compacted = (segmentId: string, from: string, count: number) => {
    const list = entries(segmentId, count);
    (list[0] as { compacted_from?: unknown }).compacted_from = { segment_id: from, at_turn: 1 };
    return list;
  };
  const pointer = (segment: string, next: number) =>
    ({
      kind: "extension",
      domain: EXTRACT_POINTER_DOMAIN,
      payload: { segment_id: segment, next_entry: next },
    }) as Partial<Entry<Item>>;

  it("continues a head's own pointer, and otherwise inherits the last pointer of the segments it was compacted from", async () => {
    const segments = {
      a: entries("a", 10, [pointer("a", 6)]),
      b: compacted("b", "a", 5),
      c: compacted("c", "b", 4),
    };
    expect(await pendingSegments(reader(segments), "c", { segment_id: "c", next_entry: 3 })).toEqual([
      { segmentId: "c", from: 3 },
    ]);
    // Two compactions without a pass between them: a's tail, all of b, then c.
    const chain = await pendingSegments(reader(segments), "c", undefined);
    expect(chain.map((s) => [s.segmentId, s.from])).toEqual([
      ["a", 6],
      ["b", 1],
      ["c", 1],
    ]);
    // A head pointer part-way through the chain resumes there.
    const resumed = await pendingSegments(reader(segments), "c", { segment_id: "b", next_entry: 1 });
    expect(resumed.map((s) => [s.segmentId, s.from])).toEqual([
      ["b", 1],
      ["c", 1],
    ]);
    // No pointer anywhere: from the first entry of the oldest segment.
    const fresh = { a: entries("a", 4), b: compacted("b", "a", 3) };
    expect((await pendingSegments(reader(fresh), "b", undefined)).map((s) => [s.segmentId, s.from])).toEqual([
      ["a", 1],
      ["b", 1],
    ]);
  });
});

describe("a session's tail at close", () => {
  it("the final pass at close extracts the tail below the threshold, and a second close finds nothing new", async () => {
    const w = await worlds();
    const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    stores.push(store);
    const log = await SessionLog.create<Item>(store, { systemPrompt: "sys", config: {} });
    await log.appendMany([
      { kind: "invoke", trigger: "user" },
      { kind: "user_input", text: "A short session: we keep pnpm." },
      {
        kind: "assistant_item",
        item: { type: "message", role: "assistant", content: [{ type: "text", text: "Kept." }] },
      },
      { kind: "turn_end", turn: 1 },
      { kind: "run_completed", result: "finished", interrupted: false },
    ]);
    const memory = { extract_threshold: 1_000_000, consolidation_threshold_files: 100 } as MemoryConfig;
    const job = createMemoryJob({ ...w.job(), memory });
    // What a pod gives its after-turn jobs, over the real log: its writer appends the pointer.
    const context = (final = false): AfterTurnJobContext => ({
      sessionId: log.sessionId,
      segmentId: log.segmentId,
      signal: new AbortController().signal,
      final,
      extension: (domain) => log.state.extensions.get(domain),
      readEntries: (segmentId = log.segmentId) => store.readAll({ sessionId: log.sessionId, segmentId }),
      appendExtension: async (domain, payload) => {
        await log.append({ kind: "extension", domain, payload });
      },
      emit: () => {},
    });
    // Positive control: an after-turn pass leaves the short session alone.
    await job.run(context());
    expect(await stagingFiles(w.workspace)).toEqual([]);

    w.double.enqueue(callTool("write_extracted", EXTRACTED), say("ok"));
    await job.run(context(true));
    expect((await stagingFiles(w.workspace)).map((s) => s.source)).toEqual([
      { segment_id: log.segmentId, range: [1, 5] },
    ]);
    const requests = w.double.requests.length;
    await job.run(context(true));
    expect(w.double.requests.length).toBe(requests);
  });
});
