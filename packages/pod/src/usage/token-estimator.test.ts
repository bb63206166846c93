import { type Item, textMessage, type UsageRecord } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { bytesOfItems, estimateTokens } from "./token-estimator.js";

const items: Item[] = Array.from({ length: 6 }, (_, i) =>
  textMessage(i % 2 ? "assistant" : "user", "x".repeat(100 * (i + 1))),
);
const record = (historyLen: number, inputTokens: number): UsageRecord => ({
  historyLen,
  inputTokens,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 1,
});
const bytes = (n: number) => bytesOfItems(items.slice(0, n));

describe("estimateTokens", () => {
  it("no usage record: bytes / 4 of the system prompt and the items", () => {
    expect(estimateTokens({ systemPrompt: "sys!", items, usage: [] })).toEqual({
      tokens: Math.ceil((4 + bytes(6)) / 4),
      method: "bytes",
    });
  });

  it("a record of exactly that history length is the measurement", () => {
    expect(
      estimateTokens({ systemPrompt: "", items, usage: [record(2, 500), record(4, 900)], at: 4 }),
    ).toEqual({
      tokens: 900,
      method: "measured",
    });
  });

  it("between two records: interpolated by serialized bytes", () => {
    const { tokens, method } = estimateTokens({
      systemPrompt: "",
      items,
      usage: [record(2, 500), record(5, 1100)],
      at: 3,
    });
    const share = (bytes(3) - bytes(2)) / (bytes(5) - bytes(2));
    expect(method).toBe("interpolated");
    expect(tokens).toBe(Math.round(500 + 600 * share));
  });

  it("after the last record: that record plus Δbytes / 4", () => {
    const { tokens, method } = estimateTokens({
      systemPrompt: "",
      items,
      usage: [record(2, 500), record(3, 700)],
    });
    expect(method).toBe("extrapolated");
    expect(tokens).toBe(Math.round(700 + (bytes(6) - bytes(3)) / 4));
  });

  it("records without input tokens (no usage reported) are not measurements", () => {
    expect(estimateTokens({ systemPrompt: "", items, usage: [record(6, 0)] }).method).toBe("bytes");
  });
});
