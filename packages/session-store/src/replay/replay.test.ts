import { describe, expect, it } from "vitest";
import type { Entry } from "../entry/entry-schema.js";
import { ReplayError } from "../errors.js";
import { ReplayFold, replay, startFold } from "./replay.js";

const start = (extra: Partial<Extract<Entry, { kind: "segment_start" }>> = {}): Entry => ({
  kind: "segment_start",
  ts: 1,
  v: 1,
  session_id: "s1",
  segment_id: "g1",
  system_prompt: "be brief",
  config: { max_tokens: 10 },
  history: [{ type: "message", role: "user", content: [{ type: "text", text: "earlier" }] }],
  ...extra,
});

describe("replay", () => {
  it("sets prompt and config from segment_start and appends user, assistant, tool and system items", () => {
    const toolCall = { type: "tool_call", call_id: "c1", name: "grep", arguments: "{}" };
    const toolResult = { type: "tool_result", call_id: "c1", summary: "none" };
    const state = replay([
      start(),
      { kind: "user_input", ts: 2, text: "hi" },
      { kind: "assistant_item", ts: 3, item: toolCall },
      { kind: "tool_result", ts: 4, item: toolResult },
      { kind: "system_item", ts: 5, item: { kind: "notification", body: "<n>ping</n>" } },
    ]);
    expect(state.systemPrompt).toBe("be brief");
    expect(state.config).toEqual({ max_tokens: 10 });
    expect(state.history).toEqual([
      { type: "message", role: "user", content: [{ type: "text", text: "earlier" }] },
      { type: "message", role: "user", content: [{ type: "text", text: "hi" }] },
      toolCall,
      toolResult,
      { type: "message", role: "system", content: [{ type: "text", text: "<n>ping</n>" }] },
    ]);
    expect(state.history[2]).toBe(toolCall);
    expect(state.entryCount).toBe(5);
  });

  it("marks an invoke without a terminal entry as in flight and interrupted", () => {
    const state = replay([
      start(),
      { kind: "user_input", ts: 2, text: "x" },
      { kind: "invoke", ts: 3, trigger: "notify" },
    ]);
    expect(state.inFlight).toEqual({ trigger: "notify", entryIndex: 2 });
    expect(state.interrupted).toBe(true);
  });

  it("takes the interrupted flag from the last run_completed or run_errored", () => {
    const base: Entry[] = [start(), { kind: "invoke", ts: 2, trigger: "user" }];
    const errored = replay([...base, { kind: "run_errored", ts: 3, message: "boom", interrupted: true }]);
    expect(errored).toMatchObject({ interrupted: true, inFlight: null });
    const recovered = replay([
      ...base,
      { kind: "run_errored", ts: 3, message: "boom", interrupted: true },
      { kind: "invoke", ts: 4, trigger: "user" },
      { kind: "run_completed", ts: 5, result: "finished", interrupted: false },
    ]);
    expect(recovered).toMatchObject({ interrupted: false, inFlight: null });
  });

  it("counts turns from turn_end and starts from the lineage's at_turn", () => {
    expect(replay([start(), { kind: "turn_end", ts: 2, turn: 1 }]).turn).toBe(1);
    const compacted = replay([start({ compacted_from: { segment_id: "g0", at_turn: 7 } })]);
    expect(compacted.turn).toBe(7);
    expect(compacted.lineage).toEqual({ forkedFrom: null, compactedFrom: { segmentId: "g0", atTurn: 7 } });
  });

  it("keeps usage records in order and the latest payload per extension domain", () => {
    const state = replay([
      start(),
      {
        kind: "llm_usage",
        ts: 2,
        history_len: 1,
        input_tokens: 100,
        cache_read_tokens: 80,
        cache_write_tokens: 20,
        output_tokens: 5,
      },
      {
        kind: "llm_usage",
        ts: 2,
        history_len: 2,
        input_tokens: 90,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 9,
        reasoning_tokens: 4,
      },
      { kind: "extension", ts: 3, domain: "memory.extract", payload: { at: 1 } },
      { kind: "extension", ts: 4, domain: "tasks", payload: ["a"] },
      { kind: "extension", ts: 5, domain: "memory.extract", payload: { at: 2 } },
      { kind: "config_changed", ts: 6, config: { max_tokens: 20 } },
    ]);
    expect(state.usage).toEqual([
      { historyLen: 1, inputTokens: 100, cacheReadTokens: 80, cacheWriteTokens: 20, outputTokens: 5 },
      {
        historyLen: 2,
        inputTokens: 90,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 9,
        reasoningTokens: 4,
      },
    ]);
    expect(state.extensions).toEqual(
      new Map<string, unknown>([
        ["tasks", ["a"]],
        ["memory.extract", { at: 2 }],
      ]),
    );
    expect(state.config).toEqual({ max_tokens: 20 });
  });

  it("keeps the kind of each system item and the segments of a user input, by history index", () => {
    const segments = [
      { type: "text", text: "see " },
      { type: "file", path: "a.md" },
    ];
    const state = replay([
      start(),
      { kind: "system_item", ts: 2, item: { kind: "context", body: "<context/>" } },
      { kind: "user_input", ts: 3, text: "see a.md", segments },
      { kind: "user_input", ts: 4, text: "plain" },
      { kind: "system_item", ts: 5, item: { kind: "interrupt", body: "<interrupt/>", by: "user" } },
      { kind: "system_item", ts: 6, item: { kind: "notification", body: "<n/>" } },
    ]);
    expect(state.historySources).toEqual([
      { index: 1, from: "system_item", item: { kind: "context", body: "<context/>" } },
      { index: 2, from: "user_input", segments },
      { index: 4, from: "system_item", item: { kind: "interrupt", body: "<interrupt/>", by: "user" } },
      { index: 5, from: "system_item", item: { kind: "notification", body: "<n/>" } },
    ]);
    // A segment_start carries them for its history (written by forks).
    const carried = replay([
      start({ history_sources: [{ index: 0, system_item: { kind: "context", body: "c" } }] }),
    ]);
    expect(carried.historySources).toEqual([
      { index: 0, from: "system_item", item: { kind: "context", body: "c" } },
    ]);
  });

  it("folds extension entries per domain with a registered fold; other domains keep the latest payload", () => {
    const entries: Entry[] = [
      start(),
      { kind: "extension", ts: 2, domain: "tasks", payload: "a" },
      { kind: "extension", ts: 3, domain: "memory.extract", payload: { at: 1 } },
      { kind: "extension", ts: 4, domain: "tasks", payload: "b" },
      { kind: "extension", ts: 5, domain: "memory.extract", payload: { at: 2 } },
    ];
    const append = (state: unknown, payload: unknown) => [
      ...((state as unknown[] | undefined) ?? []),
      payload,
    ];
    const state = replay(entries, { extensionFolds: { tasks: append } });
    expect(state.extensions).toEqual(
      new Map<string, unknown>([
        ["tasks", ["a", "b"]],
        ["memory.extract", { at: 2 }],
      ]),
    );
    expect(replay(entries).extensions.get("tasks")).toBe("b");
    // A fork snapshot carries every entry of a folded domain, so the new segment folds to the same state.
    const fold = startFold(entries[0], { extensionFolds: { tasks: append } });
    for (const entry of entries.slice(1)) fold.apply(entry);
    expect(fold.forkSnapshot().carried.map((e) => (e.kind === "extension" ? e.payload : null))).toEqual([
      "a",
      "b",
      { at: 2 },
    ]);
  });

  it("builds history messages with injected builders", () => {
    const state = replay([start({ history: [] }), { kind: "user_input", ts: 2, text: "hi" }], {
      userMessage: (entry) => ({ type: "user_text", body: entry.text }),
    });
    expect(state.history).toEqual([{ type: "user_text", body: "hi" }]);
  });

  it("rejects entries that do not start with segment_start, and a second segment_start", () => {
    expect(() => replay([])).toThrow(ReplayError);
    expect(() => replay([{ kind: "invoke", ts: 1, trigger: "user" }])).toThrow(
      /expected segment_start, found "invoke"/,
    );
    const error = (() => {
      try {
        replay([start(), start()]);
      } catch (e) {
        return e;
      }
    })();
    expect(ReplayError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ entryIndex: 1 });
  });

  it("does not mutate the entries it folds", () => {
    const first = start();
    const frozen = JSON.stringify(first);
    replay([first, { kind: "user_input", ts: 2, text: "more" }]);
    expect(JSON.stringify(first)).toBe(frozen);
  });
});

describe("fork snapshot", () => {
  const entries: Entry[] = [
    start(),
    {
      kind: "llm_usage",
      ts: 2,
      history_len: 1,
      input_tokens: 9,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      output_tokens: 1,
    },
    { kind: "extension", ts: 3, domain: "memory.extract", payload: 1 },
    { kind: "invoke", ts: 4, trigger: "user" },
    { kind: "user_input", ts: 5, text: "q" },
    { kind: "assistant_item", ts: 6, item: { type: "message", role: "assistant", content: [] } },
    { kind: "turn_end", ts: 7, turn: 1 },
    { kind: "run_completed", ts: 8, result: "paused", interrupted: true },
    { kind: "config_changed", ts: 9, config: { max_tokens: 99 } },
    { kind: "invoke", ts: 10, trigger: "resume" },
    { kind: "assistant_item", ts: 11, item: { type: "tool_call", call_id: "c", name: "x", arguments: "{}" } },
    {
      kind: "llm_usage",
      ts: 12,
      history_len: 3,
      input_tokens: 20,
      cache_read_tokens: 9,
      cache_write_tokens: 1,
      output_tokens: 2,
    },
    { kind: "extension", ts: 13, domain: "memory.extract", payload: 2 },
  ];

  it("rebuilds the same state in a new segment, with an open turn re-played after its invoke", () => {
    const fold = startFold(entries[0]);
    for (const entry of entries.slice(1)) fold.apply(entry);
    const snapshot = fold.forkSnapshot();
    expect(snapshot.history).toHaveLength(3);
    expect(snapshot.carried.map((e) => e.kind)).toEqual([
      "llm_usage",
      "extension",
      "run_completed",
      "invoke",
      "assistant_item",
      "llm_usage",
      "extension",
    ]);
    const moved = new ReplayFold({
      ...(entries[0] as Extract<Entry, { kind: "segment_start" }>),
      segment_id: "g2",
      config: snapshot.config,
      history: snapshot.history,
      forked_from: { segment_id: "g1", at_turn: snapshot.turn },
    });
    for (const entry of snapshot.carried) moved.apply(entry);
    const { segmentId, lineage, entryCount, inFlight, ...rest } = moved.state;
    const { segmentId: _s, lineage: _l, entryCount: _c, inFlight: original, ...expected } = fold.state;
    expect(rest).toEqual(expected);
    expect(inFlight?.trigger).toBe(original?.trigger);
    // Truncating the new segment to the carried invoke rolls back exactly the open turn.
    const rolledBack = replay([
      {
        ...(entries[0] as Extract<Entry, { kind: "segment_start" }>),
        config: snapshot.config,
        history: snapshot.history,
      },
      ...snapshot.carried.slice(0, 3),
    ]);
    expect(rolledBack.history).toEqual(replay(entries.slice(0, 9)).history);
  });
});
