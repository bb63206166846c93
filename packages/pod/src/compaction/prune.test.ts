import type { Item } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { planPrune } from "./prune.js";

/** `turns` tool turns, each a call and a result with `contentBytes` of output. */
function session(turns: number, contentBytes: number): Item[] {
  return Array.from({ length: turns }, (_, i): Item[] => [
    { type: "tool_call", call_id: `c${i}`, name: "lookup", arguments: "{}" },
    { type: "tool_result", call_id: `c${i}`, summary: `found ${i}`, content: "d".repeat(contentBytes) },
  ]).flat();
}

const config = { protectedTokens: 1000, minSavings: 2000 };

describe("planPrune", () => {
  it("drops tool-result content before the protected tail from the request copy only; summaries stay", () => {
    const items = session(20, 2000);
    const frozen = structuredClone(items);
    const plan = planPrune(items, 0, config);
    expect(plan.upTo).toBeGreaterThan(0);
    expect(plan.savedTokens).toBeGreaterThanOrEqual(2000);
    const results = plan.items.filter((item) => item.type === "tool_result");
    expect(results).toHaveLength(20);
    expect(results.every((item) => item.summary.startsWith("found"))).toBe(true);
    expect(
      plan.items
        .slice(0, plan.upTo)
        .some((item) => item.type === "tool_result" && item.content !== undefined),
    ).toBe(false);
    const tail = plan.items.slice(plan.upTo).filter((item) => item.type === "tool_result");
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.every((item) => item.content !== undefined)).toBe(true);
    expect(items).toEqual(frozen);
  });

  it("does nothing while the saving stays under prune_min_savings", () => {
    const plan = planPrune(session(4, 2000), 0, config);
    expect(plan).toMatchObject({ upTo: 0, savedTokens: 0 });
  });

  it("moves in stable steps: the boundary stays put until the newly prunable content is worth a step", () => {
    const items = session(20, 2000);
    const first = planPrune(items, 0, config);
    const grown = [...items, ...session(21, 2000).slice(40)];
    // One more turn adds 500 tokens of prunable content: under the 2000-token step, so the prefix is unchanged.
    expect(planPrune(grown, first.upTo, config).upTo).toBe(first.upTo);
    // Positive control: a boundary that followed the protected tail would have moved on this request.
    expect(planPrune(grown, 0, { ...config, minSavings: 1 }).upTo).toBeGreaterThan(first.upTo);
    const much = [...items, ...session(30, 2000).slice(40)];
    expect(planPrune(much, first.upTo, config).upTo).toBeGreaterThan(first.upTo);
  });
});
