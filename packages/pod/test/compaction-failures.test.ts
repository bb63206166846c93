import { describe, expect, it } from "vitest";
import {
  CompactionOverThresholdError,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
} from "../src/index.js";
import {
  compactionTable,
  compactRequests,
  compactResponder,
  eventsOf,
  lookupTools,
  mainRequests,
  ofType,
} from "./compaction-harness.js";
import { readAllSegments, text, toolCall, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();
const silent = { parts: [{ type: "text" as const, text: "I would rather not." }] };
const writeSummary = (summary: string) => ({
  parts: [{ type: "tool_call" as const, name: "write_summary", arguments: { summary } }],
});

describe("compaction failures", () => {
  it("breaker: three failing compactions in a row disable compaction, and the pod keeps working", async () => {
    const w = await world({
      manifestExtra: compactionTable({ threshold: 600, request_threshold: 600, retained_tokens: 100 }),
      toolPackages: [lookupTools(2400)],
      double: { measureInputTokens: true, respond: compactResponder({ script: [silent] }) },
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("lookup", { q: "a" }), text("first answer"));
    const handle = pod.run("look up a");
    const events = await eventsOf(handle);
    expect((await handle).status).toBe("finished");
    const failed = ofType(events, "compaction_failed");
    expect(failed.map((event) => event.disabled)).toEqual([false, false, true]);
    for (const event of failed) expect(CompactSummaryMissingError.isInstance(event.error)).toBe(true);
    expect(pod.compactionDisabled).toBe(true);
    // Each attempt asked once, then nudged once.
    const compact = compactRequests(w.double.requests);
    expect(compact).toHaveLength(6);
    const nudge = pod.catalog.render("compact_nudge_missing_summary");
    expect(JSON.stringify(compact[1]?.body.messages)).toContain(JSON.stringify(nudge).slice(1, 40));

    // The pod goes on: the next turn runs over the threshold without trying again.
    w.double.enqueue(text("second answer"));
    const next = pod.run("and now?");
    const nextEvents = await eventsOf(next);
    expect((await next).text).toBe("second answer");
    expect(ofType(nextEvents, "compaction_start")).toEqual([]);
    expect(compactRequests(w.double.requests)).toHaveLength(6);
    expect(mainRequests(w.double.requests)).toHaveLength(3);
    expect((await readAllSegments(w.workspace)).size).toBe(1);
  });

  it("a compaction whose result is still over the threshold is reported and rejected, never written", async () => {
    const longSummary = `Summary: ${"everything that happened, at length. ".repeat(90)}`;
    const w = await world({
      manifestExtra: compactionTable({ threshold: 1000, request_threshold: 1000, retained_tokens: 400 }),
      toolPackages: [lookupTools(3000)],
      double: { measureInputTokens: true, respond: compactResponder({ summary: longSummary }) },
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("lookup", { q: "a" }), text("answer"));
    const handle = pod.run("look up a");
    const events = await eventsOf(handle);
    expect((await handle).status).toBe("finished");
    const [failed] = ofType(events, "compaction_failed");
    expect(CompactionOverThresholdError.isInstance(failed?.error)).toBe(true);
    const error = failed?.error as CompactionOverThresholdError;
    expect(error.tokensAfter).toBeGreaterThan(1000);
    expect(error.message).toContain("threshold = 1000");
    expect(ofType(events, "compaction_done")).toEqual([]);
    expect((await readAllSegments(w.workspace)).size).toBe(1);
    expect(pod.history.some((item) => JSON.stringify(item).includes("Compacted context summary"))).toBe(
      false,
    );
  });

  it("a missing summary gets one nudge; a summary that then arrives is used", async () => {
    const w = await world({
      manifestExtra: compactionTable({ threshold: 100000, request_threshold: 100000, retained_tokens: 50 }),
      double: {
        measureInputTokens: true,
        respond: compactResponder({ script: [silent, writeSummary("nudged summary"), text("done")] }),
      },
    });
    const pod = await w.pod();
    w.double.enqueue(text("a"), text("b"));
    await pod.run("one");
    await pod.run("two");
    const outcome = await pod.compact();
    expect(outcome.status).toBe("compacted");
    expect(JSON.stringify(pod.history[0])).toContain("nudged summary");
  });

  it("an oversize summary gets one rewrite request, then CompactSummaryOversizeError with nothing changed", async () => {
    const long = "far too long ".repeat(40);
    const w = await world({
      manifestExtra: compactionTable({
        threshold: 100000,
        request_threshold: 100000,
        retained_tokens: 50,
        summary_target_tokens: 20,
        summary_max_tokens: 50,
      }),
      double: {
        measureInputTokens: true,
        respond: compactResponder({ script: [writeSummary(long), text("done")] }),
      },
    });
    const pod = await w.pod();
    w.double.enqueue(text("a"), text("b"));
    await pod.run("one");
    await pod.run("two");
    const history = [...pod.history];
    const events: string[] = [];
    const error = await pod.compact({ onEvent: (event) => events.push(event.type) }).catch((e: unknown) => e);
    expect(CompactSummaryOversizeError.isInstance(error)).toBe(true);
    expect(events).toEqual(["compaction_start", "compaction_failed"]);
    const compact = compactRequests(w.double.requests);
    expect(compact).toHaveLength(4);
    const rewrite = pod.catalog.render("compact_rewrite_oversize_summary", {
      summary_tokens: Math.ceil(Buffer.byteLength(long) / 4),
      summary_max_tokens: 50,
    });
    expect(JSON.stringify(compact[2]?.body.messages)).toContain(JSON.stringify(rewrite).slice(1, -1));
    expect(pod.history).toEqual(history);
    expect((await readAllSegments(w.workspace)).size).toBe(1);
  });
});
