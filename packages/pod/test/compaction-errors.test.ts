import { describe, expect, it } from "vitest";
import {
  CompactionOverThresholdError,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
  NothingToCompactError,
} from "../src/index.js";
import { compactionTable, compactResponder } from "./compaction-harness.js";
import { text, usePodWorlds } from "./pod-harness.js";

// docs/errors.md: a message says what went wrong and where; its `hint` says what to do, in the
// manifest keys a user would change.
const world = usePodWorlds();
const longSummary = `Summary: ${"everything that happened, at length. ".repeat(90)}`;

/** A manual compaction whose summary is far larger than the given limits allow. */
async function overLimit(table: Record<string, number>): Promise<CompactionOverThresholdError> {
  const w = await world({
    manifestExtra: compactionTable({ retained_tokens: 50, ...table }),
    double: { measureInputTokens: true, respond: compactResponder({ summary: longSummary }) },
  });
  const pod = await w.pod();
  w.double.enqueue(text("a"), text("b"));
  await pod.run("one");
  await pod.run("two");
  const error = await pod.compact().catch((e: unknown) => e);
  expect(CompactionOverThresholdError.isInstance(error), String(error)).toBe(true);
  return error as CompactionOverThresholdError;
}

describe("compaction errors say what to do, in manifest keys", () => {
  it("over [compaction] threshold: the hint says to raise threshold or shrink the compacted history", async () => {
    const error = await overLimit({ threshold: 300, request_threshold: 300 });
    expect(error.limitKey).toBe("threshold");
    expect(error.message).toContain("over [compaction] threshold = 300");
    expect(error.hint).toContain("raise [compaction] threshold (it is 300");
    expect(error.hint).toContain(
      "lower [compaction] retained_tokens, auto_read_budget_tokens or summary_max_tokens",
    );
  });

  it("over [compaction] result_context_max_tokens: the hint names that key, not the threshold", async () => {
    const error = await overLimit({
      threshold: 100000,
      request_threshold: 100000,
      result_context_max_tokens: 300,
    });
    expect(error.limitKey).toBe("result_context_max_tokens");
    expect(error.message).toContain("over [compaction] result_context_max_tokens = 300");
    expect(error.hint).toContain("raise [compaction] result_context_max_tokens (it is 300)");
    expect(error.hint).not.toContain("raise [compaction] threshold");
    expect(error.hint).toContain("lower [compaction] retained_tokens");
  });

  it("a missing summary: the hint names worker_max_turns, the [model] ref and how to turn compaction off", () => {
    const error = new CompactSummaryMissingError(4);
    expect(error.message).toContain("never called write_summary");
    expect(error.hint).toContain("raise [compaction] worker_max_turns if 4 requests were too few");
    expect(error.hint).toContain("[model] ref");
    expect(error.hint).toContain("[compaction] enabled = false");
  });

  it("an oversize summary: the hint names summary_max_tokens with its value and summary_target_tokens", () => {
    const error = new CompactSummaryOversizeError(5000, 4000);
    expect(error.message).toContain("over [compaction] summary_max_tokens = 4000");
    expect(error.hint).toContain("raise [compaction] summary_max_tokens (it is 4000)");
    expect(error.hint).toContain("lower [compaction] summary_target_tokens");
  });

  it("nothing to compact: the hint names retained_tokens", () => {
    const error = new NothingToCompactError(3, 8000);
    expect(error.message).toContain("[compaction] retained_tokens = 8000");
    expect(error.hint).toContain("lower [compaction] retained_tokens");
  });
});
