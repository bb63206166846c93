import fc from "fast-check";

// Hand-edited or damaged session logs that are still valid JSON: a well-formed log of three turns
// with one entry changed so that its item or its request config no longer matches what the worker
// accepts. Shared by the pod's store tests and the CLI's end-to-end test.

/** One JSON value per entry, in order (the `segment_start` first). */
export type RawEntry = Record<string, unknown>;

const reasoning = {
  type: "reasoning",
  text: "Read the file first.",
  provider_metadata: { anthropic: { signature: "c2lnbmF0dXJl" } },
};
const message = (role: string, text: string) => ({
  type: "message",
  role,
  content: [{ type: "text", text }],
});
const toolCall = (id: string) => ({
  type: "tool_call",
  call_id: id,
  name: "read_file",
  arguments: '{"path":"a.ts"}',
});
const toolResult = (id: string) => ({
  type: "tool_result",
  call_id: id,
  summary: "read 3 lines",
  content: "x = 1",
});

/** A valid log of three turns (with a `config_changed` after the first); ids as given. */
export function wellFormedLog(sessionId: string, segmentId: string): RawEntry[] {
  const turn = (n: number, ts: number): RawEntry[] => [
    { kind: "invoke", ts, trigger: "user" },
    { kind: "user_input", ts, text: `question ${n}` },
    ...(n === 1 ? [{ kind: "assistant_item", ts, item: reasoning }] : []),
    { kind: "assistant_item", ts, item: toolCall(`call_${n}`) },
    { kind: "tool_result", ts, item: toolResult(`call_${n}`) },
    { kind: "assistant_item", ts, item: message("assistant", `answer ${n}`) },
    {
      kind: "llm_usage",
      ts,
      history_len: 4 * n,
      input_tokens: 100 * n,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      output_tokens: 7,
    },
    { kind: "turn_end", ts, turn: n },
    { kind: "run_completed", ts, result: "finished", interrupted: false },
  ];
  return [
    {
      kind: "segment_start",
      ts: 1_760_000_000_000,
      v: 2,
      session_id: sessionId,
      segment_id: segmentId,
      system_prompt: "You are careful.",
      config: { max_tokens: 8192, temperature: 0.2 },
      history: [message("user", "earlier question"), message("assistant", "earlier answer")],
    },
    ...turn(1, 1_760_000_001_000),
    { kind: "config_changed", ts: 1_760_000_001_500, config: { max_tokens: 4096 } },
    ...turn(2, 1_760_000_002_000),
    ...turn(3, 1_760_000_003_000),
  ];
}

/** What a corruption changed: which entry (0-based index) and how, in words. */
export interface Corruption {
  category: "item shape" | "config type" | "item type";
  /** Index of the changed entry in the log. */
  index: number;
  change: string;
}

/** Where history items sit in a log: [entry index, path to the item]. */
function itemPlaces(log: readonly RawEntry[]): [number, (string | number)[]][] {
  const places: [number, (string | number)[]][] = [];
  log.forEach((entry, index) => {
    if (entry.kind === "assistant_item" || entry.kind === "tool_result") places.push([index, ["item"]]);
    if (entry.kind === "segment_start") {
      (entry.history as unknown[]).forEach((_, at) => {
        places.push([index, ["history", at]]);
      });
    }
  });
  return places;
}

function configPlaces(log: readonly RawEntry[]): number[] {
  return log.flatMap((entry, index) =>
    entry.kind === "segment_start" || entry.kind === "config_changed" ? [index] : [],
  );
}

function at(entry: RawEntry, path: readonly (string | number)[]): Record<string, unknown> {
  let value: unknown = entry;
  for (const step of path) value = (value as Record<string | number, unknown>)[step];
  return value as Record<string, unknown>;
}

/** Values of JSON types other than the one a field holds. */
const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.nat(), { maxLength: 2 }),
);
const notANumber = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.nat(), { maxLength: 2 }),
);
const notAnArray = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}));

/** Required fields of each item type and values that break each. */
const FIELD_BREAKERS: Record<string, Record<string, fc.Arbitrary<unknown>>> = {
  message: {
    role: fc.oneof(
      fc.string().filter((role) => !["user", "assistant", "system"].includes(role)),
      notAString,
    ),
    content: notAnArray,
  },
  tool_call: { call_id: notAString, name: notAString, arguments: notAString },
  tool_result: { call_id: notAString, summary: notAString },
  reasoning: { text: notAString },
};
const KNOWN_TYPES = [
  "message",
  "tool_call",
  "tool_result",
  "reasoning",
  "provider_tool_call",
  "provider_tool_result",
  "compaction",
];
/** Values that break each request-config key (by type or by range). */
const CONFIG_BREAKERS: Record<string, fc.Arbitrary<unknown>> = {
  max_tokens: fc.oneof(
    notANumber,
    fc.integer({ max: 0 }),
    fc.double({ min: 0.1, max: 1e6, noInteger: true }),
  ),
  temperature: notANumber,
  top_p: notANumber,
  top_k: fc.oneof(notANumber, fc.double({ min: 0.1, max: 100, noInteger: true })),
  stop_sequences: fc.oneof(fc.string(), fc.integer(), fc.array(fc.integer(), { minLength: 1, maxLength: 3 })),
  reasoning: fc.oneof(fc.constant(""), fc.boolean(), fc.integer({ max: 0 }), fc.constant(null)),
};

/**
 * A corruption of `log`: an item with a required field missing or of the wrong type, a request
 * config key of the wrong type, or an item of a type the worker does not know. `from` limits it
 * to entries at that index and after.
 */
export function corruptionOf(
  log: readonly RawEntry[],
  from = 0,
): fc.Arbitrary<{ log: RawEntry[]; corruption: Corruption }> {
  const items = itemPlaces(log).filter(([index]) => index >= from);
  const configs = configPlaces(log).filter((index) => index >= from);
  const copyWith = (index: number, change: (entry: RawEntry) => void) => {
    const copy = structuredClone(log) as RawEntry[];
    change(copy[index] as RawEntry);
    return copy;
  };
  const itemShape = fc.constantFrom(...items).chain(([index, path]) => {
    const type = at(log[index] as RawEntry, path).type as string;
    const breakers = FIELD_BREAKERS[type] ?? {};
    const fields = Object.keys(breakers);
    return fc.tuple(fc.constantFrom(...fields), fc.boolean()).chain(([field, remove]) =>
      (remove ? fc.constant(undefined) : (breakers[field] as fc.Arbitrary<unknown>)).map((value) => ({
        log: copyWith(index, (entry) => {
          const item = at(entry, path);
          if (value === undefined) delete item[field];
          else item[field] = value;
        }),
        corruption: {
          category: "item shape" as const,
          index,
          change: `${path.join(".")}.${field} ${value === undefined ? "removed" : `= ${JSON.stringify(value)}`}`,
        },
      })),
    );
  });
  const itemType = fc
    .tuple(
      fc.constantFrom(...items),
      fc.string({ minLength: 1 }).filter((type) => !KNOWN_TYPES.includes(type)),
    )
    .map(([[index, path], type]) => ({
      log: copyWith(index, (entry) => {
        at(entry, path).type = type;
      }),
      corruption: {
        category: "item type" as const,
        index,
        change: `${path.join(".")}.type = ${JSON.stringify(type)}`,
      },
    }));
  const configType = fc
    .tuple(fc.constantFrom(...configs), fc.constantFrom(...Object.keys(CONFIG_BREAKERS)))
    .chain(([index, key]) =>
      (CONFIG_BREAKERS[key] as fc.Arbitrary<unknown>).map((value) => ({
        log: copyWith(index, (entry) => {
          (entry.config as Record<string, unknown>)[key] = value;
        }),
        corruption: {
          category: "config type" as const,
          index,
          change: `config.${key} = ${JSON.stringify(value)}`,
        },
      })),
    );
  return fc.oneof(
    ...(items.length > 0 ? [itemShape, itemType] : []),
    ...(configs.length > 0 ? [configType] : []),
  );
}

/** `count` corruptions of `log` (at `from` and after) drawn with a fixed seed, for tests that cannot run many. */
export function sampleCorruptions(
  log: readonly RawEntry[],
  options: { from?: number; count: number; seed: number },
): { log: RawEntry[]; corruption: Corruption }[] {
  return fc.sample(corruptionOf(log, options.from), { numRuns: options.count, seed: options.seed });
}
