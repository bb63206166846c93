import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { mulberry32 } from "../../test/helpers/seeded-random.js";
import { createEntrySchema, EntrySchema, FORMAT_VERSION, SystemItemSchema } from "./entry-schema.js";
import { compileFastCheck } from "./fast-check.js";

/** One entry of every kind, with every optional field somewhere, as writers produce them. */
const ENTRIES: unknown[] = [
  {
    kind: "segment_start",
    ts: 1,
    v: FORMAT_VERSION,
    session_id: "s",
    segment_id: "g",
    system_prompt: "You are careful.",
    config: { max_tokens: 8192, reasoning: "high", stop_sequences: ["x"] },
    history: [{ type: "message", role: "user", content: [{ type: "text", text: "hi" }] }],
    forked_from: { segment_id: "f", at_turn: 2 },
    compacted_from: { segment_id: "c", at_turn: 0 },
    history_sources: [
      { index: 0, system_item: { kind: "context", body: "ctx" } },
      { index: 1, segments: [{ type: "text" }] },
    ],
  },
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
  { kind: "invoke", ts: 2, trigger: "notify" },
  { kind: "user_input", ts: 3, text: "日本語 ✓", segments: [{ any: "thing" }] },
  { kind: "user_input", ts: 3, text: "" },
  {
    kind: "assistant_item",
    ts: 4,
    item: { type: "reasoning", text: "t", provider_metadata: { anthropic: { signature: "s" } } },
  },
  { kind: "tool_result", ts: 5, item: { type: "tool_result", call_id: "c", summary: "ok", is_error: false } },
  { kind: "system_item", ts: 6, item: { kind: "interrupt", body: "stop", extra: 1 } },
  { kind: "turn_end", ts: 7, turn: 0 },
  {
    kind: "llm_usage",
    ts: 8,
    history_len: 3,
    input_tokens: 10,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 1,
    reasoning_tokens: 4,
  },
  { kind: "run_completed", ts: 9, result: "limit_reached", interrupted: true },
  { kind: "run_errored", ts: 10, message: "boom", interrupted: true },
  { kind: "config_changed", ts: 11, config: { temperature: 0.2 } },
  { kind: "extension", ts: 12, domain: "memory.extract", payload: { pointer: 7 } },
  { kind: "extension", ts: 12, domain: "d", payload: null },
  {
    kind: "approval_requested",
    ts: 13,
    call_id: "c",
    tool: "bash",
    arguments: '{"command":"ls"}',
    pod_path: ["root", "role#1"],
    asked_by: "bash",
    reason: "runs a command",
  },
  { kind: "approval_answered", ts: 14, call_id: "c", decision: "deny", reason: "no", by: "me@host" },
  { kind: "approval_answered", ts: 14, call_id: "c", decision: "allow", by: "svc", in_run: true },
  { kind: "run_completed", ts: 15, result: "awaiting_approval", interrupted: true },
  { kind: "run_completed", ts: 16, result: "budget_exhausted", interrupted: false },
  {
    kind: "approval_requested",
    ts: 17,
    call_id: "s",
    tool: "spawn_pod",
    arguments: "{}",
    pod_path: ["root"],
    asked_by: "subpod",
    child_session_id: "child",
  },
  { kind: "turn_end", ts: 7, turn: 1, note: "a newer writer's field" },
];

/** Values of every JSON type and the edges zod cares about. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  "",
  "x",
  "user",
  "finished",
  "notification",
  "segment_start",
  [],
  ["x"],
  {},
  { type: "message" },
  { kind: "context", body: "b" },
  { segment_id: "", at_turn: 1 },
  new Date(0),
  Object.create({ inherited: 1 }),
];

/** Every (nested) object path of `value`, for mutation. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const out: (string | number)[][] = [prefix];
  for (const [key, child] of Object.entries(value)) {
    const step = Array.isArray(value) ? Number(key) : key;
    out.push([...prefix, step], ...paths(child, [...prefix, step]));
  }
  return out;
}

/** A copy of `entry` with one change at a random path: replaced, deleted, or an extra key added. */
function mutate(entry: unknown, random: () => number): unknown {
  const copy = structuredClone(entry) as Record<string, unknown>;
  const all = paths(copy).filter((p) => p.length > 0);
  const path = all[Math.floor(random() * all.length)] as (string | number)[];
  let parent: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  const pick = random();
  if (pick < 0.2 && !Array.isArray(parent)) delete parent[last];
  else if (pick < 0.3 && !Array.isArray(parent)) parent[`extra_${Math.floor(random() * 3)}`] = "x";
  else parent[last] = REPLACEMENTS[Math.floor(random() * REPLACEMENTS.length)];
  return copy;
}

function expectSound(schema: z.ZodType, fast: (value: unknown) => boolean, values: unknown[]) {
  let accepted = 0;
  for (const value of values) {
    if (!fast(value)) continue;
    accepted++;
    const zod = schema.safeParse(value);
    expect(zod.success, `fast check accepted what zod rejects: ${JSON.stringify(value)}`).toBe(true);
  }
  return accepted;
}

describe("the fast entry check", () => {
  it("accepts every valid entry kind, so the codec rarely needs zod", () => {
    const fast = compileFastCheck(EntrySchema);
    expect(fast).toBeDefined();
    for (const entry of ENTRIES) {
      expect(EntrySchema.safeParse(entry).success, JSON.stringify(entry)).toBe(true);
      expect(fast?.(entry), JSON.stringify(entry)).toBe(true);
    }
  });

  it("never accepts what zod rejects: 20,000 seeded mutations of every entry kind", () => {
    const fast = compileFastCheck(EntrySchema) as (value: unknown) => boolean;
    const random = mulberry32(20_240_611);
    const mutants: unknown[] = [];
    for (let i = 0; i < 20_000; i++) {
      let value = ENTRIES[i % ENTRIES.length];
      for (let n = 1 + Math.floor(random() * 2); n > 0; n--) value = mutate(value, random);
      mutants.push(value);
    }
    const accepted = expectSound(EntrySchema, fast, mutants);
    // Not vacuous: the mutations include harmless ones (extra keys, valid replacements) and
    // many invalid ones.
    expect(accepted).toBeGreaterThan(2_000);
    expect(accepted).toBeLessThan(18_000);
  });

  it("holds for a stricter item schema: strict objects, enums, bounds", () => {
    const item = z.discriminatedUnion("type", [
      z.strictObject({
        type: z.literal("message"),
        role: z.enum(["user", "assistant"]),
        text: z.string().max(5),
      }),
      z.strictObject({
        type: z.literal("tool_call"),
        call_id: z.string().min(3),
        n: z.int().lte(9).optional(),
      }),
    ]);
    const schema = createEntrySchema(item);
    const fast = compileFastCheck(schema) as (value: unknown) => boolean;
    expect(fast).toBeDefined();
    const valid = [
      { kind: "assistant_item", ts: 1, item: { type: "message", role: "user", text: "hi" } },
      { kind: "assistant_item", ts: 1, item: { type: "tool_call", call_id: "abc", n: 9 } },
    ];
    for (const entry of valid) expect(fast(entry)).toBe(true);
    const random = mulberry32(7);
    const mutants = Array.from({ length: 5_000 }, (_, i) => mutate(valid[i % 2], random));
    expect(expectSound(schema, fast, mutants)).toBeGreaterThan(100);
    expect(
      fast({ kind: "assistant_item", ts: 1, item: { type: "message", role: "user", text: "toolong" } }),
    ).toBe(false);
  });

  it("leaves schemas with refinements or transforms to zod entirely", () => {
    expect(compileFastCheck(createEntrySchema(z.looseObject({ type: z.string() }).refine(() => false)))).toBe(
      undefined,
    );
    expect(compileFastCheck(z.string().transform((s) => s.length))).toBe(undefined);
    expect(compileFastCheck(SystemItemSchema)).toBeDefined();
  });

  it("leaves everything to zod where code generation from strings is disabled", () => {
    // What `--disallow-code-generation-from-strings` makes `new Function` do.
    vi.stubGlobal(
      "Function",
      vi.fn(() => {
        throw new EvalError("Code generation from strings disallowed for this context");
      }),
    );
    try {
      expect(compileFastCheck(EntrySchema)).toBe(undefined);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(compileFastCheck(EntrySchema)).toBeDefined();
  });

  it("reads array holes as zod does: a missing element is undefined", () => {
    const fast = compileFastCheck(EntrySchema) as (value: unknown) => boolean;
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const pod_path = ["root", , "child"];
    const entry = {
      kind: "approval_requested",
      ts: 1,
      call_id: "c",
      tool: "t",
      arguments: "",
      pod_path,
      asked_by: "b",
    };
    expect(EntrySchema.safeParse(entry).success).toBe(false);
    expect(fast(entry)).toBe(false);
  });
});
