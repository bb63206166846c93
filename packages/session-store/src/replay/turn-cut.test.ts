import { describe, expect, it } from "vitest";
import type { Entry } from "../entry/entry-schema.js";
import { SessionStoreUsageError } from "../errors.js";
import { entriesThroughTurn } from "./turn-cut.js";

const segment: Entry[] = [
  {
    kind: "segment_start",
    ts: 1,
    v: 1,
    session_id: "s",
    segment_id: "g",
    system_prompt: null,
    config: {},
    history: [],
  },
  { kind: "system_item", ts: 2, item: { kind: "context", body: "ctx" } },
  { kind: "invoke", ts: 3, trigger: "user" },
  { kind: "user_input", ts: 4, text: "a" },
  { kind: "turn_end", ts: 5, turn: 1 },
  {
    kind: "llm_usage",
    ts: 6,
    history_len: 1,
    input_tokens: 1,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 1,
  },
  { kind: "run_completed", ts: 7, result: "finished", interrupted: false },
  { kind: "config_changed", ts: 8, config: { temperature: 0 } },
  { kind: "system_item", ts: 9, item: { kind: "notification", body: "n" } },
  { kind: "invoke", ts: 10, trigger: "notify" },
  { kind: "turn_end", ts: 11, turn: 2 },
];

describe("entriesThroughTurn", () => {
  it("cuts after the turn's turn_end and the bookkeeping entries that follow it", () => {
    expect(entriesThroughTurn(segment, 1, "g")).toBe(8);
    expect(entriesThroughTurn(segment, 2, "g")).toBe(11);
  });

  it("cuts the starting turn before the first invoke", () => {
    expect(entriesThroughTurn(segment, 0, "g")).toBe(2);
  });

  it("names the turns that exist when asked for one that does not", () => {
    expect(() => entriesThroughTurn(segment, 5, "g")).toThrow(SessionStoreUsageError);
    expect(() => entriesThroughTurn(segment, 5, "g")).toThrow(
      /segment g has no turn 5 \(it holds turns 0\.\.2\)/,
    );
  });
});
