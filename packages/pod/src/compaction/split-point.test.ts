import { type Item, textMessage } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { findSplitPoint, keepCallsWithResults } from "./split-point.js";

const call = (id: string): Item => ({ type: "tool_call", call_id: id, name: "t", arguments: "{}" });
const result = (id: string, size = 10): Item => ({
  type: "tool_result",
  call_id: id,
  summary: "s",
  content: "r".repeat(size),
});

describe("findSplitPoint", () => {
  it("keeps the byte share retained / estimated of the history at its end", () => {
    const items = Array.from({ length: 10 }, (_, i) =>
      textMessage(i % 2 ? "assistant" : "user", "m".repeat(400)),
    );
    expect(findSplitPoint(items, 300, 1000)).toBe(7);
    expect(findSplitPoint(items, 5000, 1000)).toBe(0);
  });

  it("moves back so that no retained tool result loses its call (a batch of parallel calls included)", () => {
    const items: Item[] = [
      textMessage("user", "go"),
      { type: "reasoning", text: "thinking" },
      call("a"),
      call("b"),
      result("a", 1000),
      result("b", 1000),
      textMessage("assistant", "done"),
    ];
    // Without the adjustment the tail would start at result b, orphaning it from call b.
    expect(keepCallsWithResults(items, 5)).toBe(1);
    expect(findSplitPoint(items, 260, 700)).toBe(1);
  });
});
