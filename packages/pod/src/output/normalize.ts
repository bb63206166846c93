import type { OutputSchema, OutputValidation } from "./output-schema.js";

/**
 * A repair made to an answer before it counted, recorded in the log: `parsed_string` (a JSON
 * object or array sent as a string), `unwrapped:<key>` (the answer sent inside a one-key object).
 */
export type OutputNormalization = "parsed_string" | `unwrapped:${string}`;

/** An answer after normalisation: what was checked, the repairs that made it valid, the verdict. */
export interface NormalizedAnswer<T> {
  /** The value the verdict is about: the raw answer, or the repaired one when repairs made it valid. */
  value: unknown;
  /** The repairs applied, in order; empty when the raw answer was valid or nothing made it so. */
  normalizations: OutputNormalization[];
  result: OutputValidation<T>;
}

/** At most this many repairs in a row (`{"output": "{\"answer\": {…}}"}` takes three). */
const MAX_STEPS = 3;

/**
 * Checks `raw` against `schema`, repairing the two ways models commonly wrap a correct answer,
 * and only when the repair is what makes it valid: a valid answer is taken as it is, and a repair
 * that still leaves it invalid is not applied (the model is then told what is wrong with what it
 * sent). The repairs, tried shortest sequence first and in this order at each step:
 *
 * - parse a string holding a JSON object or array (only plain JSON: a Markdown code fence is
 *   prose, not a stringified value, and goes back to the model);
 * - unwrap an object with a single key (`{"output": {…}}`, `{"answer": …}`, any key) to its value.
 *
 * When nothing makes the answer valid, `value` is the raw answer and `result` lists its issues.
 */
export function normalizeAnswer<T>(raw: unknown, schema: OutputSchema<T>): NormalizedAnswer<T> {
  const direct = schema.validate(raw);
  if (direct.ok) return { value: raw, normalizations: [], result: direct };
  let frontier: { value: unknown; normalizations: OutputNormalization[] }[] = [
    { value: raw, normalizations: [] },
  ];
  for (let step = 0; step < MAX_STEPS; step++) {
    const next: typeof frontier = [];
    for (const candidate of frontier) {
      for (const repaired of repairsOf(candidate.value)) {
        const normalizations = [...candidate.normalizations, repaired.normalization];
        const result = schema.validate(repaired.value);
        if (result.ok) return { value: repaired.value, normalizations, result };
        next.push({ value: repaired.value, normalizations });
      }
    }
    frontier = next;
  }
  return { value: raw, normalizations: [], result: direct };
}

function repairsOf(value: unknown): { value: unknown; normalization: OutputNormalization }[] {
  const out: { value: unknown; normalization: OutputNormalization }[] = [];
  if (typeof value === "string") {
    const parsed = parseJsonContainer(value);
    if (parsed !== undefined) out.push({ value: parsed, normalization: "parsed_string" });
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const [key] = keys;
    if (keys.length === 1 && key !== undefined)
      out.push({ value: (value as Record<string, unknown>)[key], normalization: `unwrapped:${key}` });
  }
  return out;
}

/** The object or array a string holds as plain JSON, else undefined. */
function parseJsonContainer(text: string): unknown {
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}
