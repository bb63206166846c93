import { checkValueNesting, type RenderBudget } from "./budget.js";
import { TemplateValueError, UnprintableValue } from "./errors.js";

/**
 * The value model of the hardened environment. A template only ever sees primitives, frozen
 * plain data (arrays and objects whose prototype is `Object.prototype` or `null`), objects it
 * built itself, and the environment's own `TemplateCallable` / `TemplateObject` instances.
 * No JavaScript function is ever a template value, so there is nothing to call, print or
 * climb from (`constructor`, `__proto__`, `prototype`).
 */

/** Attribute names that are never reachable, whatever the object. */
export const RESERVED_ATTRIBUTES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** Arguments of a call as written: positional values and `name=value` keywords. */
export interface CallArguments {
  readonly positional: readonly unknown[];
  readonly keywords: ReadonlyMap<string, unknown> | null;
}

/** Something a template may call: a macro, a `caller` block, a global such as `range`. */
export abstract class TemplateCallable {
  constructor(readonly displayName: string) {}
  /** Runs the call; throws `TemplateValueError` or `TemplateRenderError` on failure. */
  abstract invoke(args: CallArguments, budget: RenderBudget): unknown;
}

/** A host object with an explicit attribute table (e.g. a `cycler`). */
export abstract class TemplateObject {
  /** The attribute's value, or `undefined` when it has none. */
  abstract getAttribute(name: string): unknown;
}

/** True for arrays and objects whose prototype is `Object.prototype` or `null`. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The type name used in error messages. */
export function typeName(value: unknown): string {
  if (value === null) return "none";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "list";
  if (value instanceof TemplateCallable) return "callable";
  if (value instanceof TemplateObject) return "object";
  if (isPlainObject(value)) return "mapping";
  return typeof value;
}

/**
 * Looks up `key` on `target` under the sandbox rules, or returns `undefined` when there is no
 * such attribute. Own properties of plain data only; strings and lists take (negative) integer
 * indices and `length`. Throws for targets that have no attributes at all (numbers, callables).
 */
export function getAttribute(target: unknown, key: unknown): unknown {
  if (typeof key === "string") {
    if (RESERVED_ATTRIBUTES.has(key)) return undefined;
  } else if (typeof key !== "number") {
    throw new TemplateValueError(`cannot use a ${typeName(key)} as an attribute name or index`);
  }
  if (typeof target === "string" || Array.isArray(target)) return indexSequence(target, key);
  if (isPlainObject(target)) {
    const name = String(key);
    return Object.hasOwn(target, name) ? target[name] : undefined;
  }
  if (target instanceof TemplateObject) return typeof key === "string" ? target.getAttribute(key) : undefined;
  if (target === null || target === undefined) return undefined;
  throw new TemplateValueError(`a ${typeName(target)} has no attributes (looked up ${JSON.stringify(key)})`);
}

function indexSequence(target: string | readonly unknown[], key: string | number): unknown {
  if (key === "length") return target.length;
  // No index has more than 16 digits: longer keys are not scanned (a render may look one up often).
  const index =
    typeof key === "number" ? key : key.length <= 16 && /^-?\d+$/.test(key) ? Number(key) : Number.NaN;
  if (!Number.isInteger(index)) return undefined;
  const at = index < 0 ? target.length + index : index;
  if (at < 0 || at >= target.length) return undefined;
  return typeof target === "string" ? target[at] : target[at];
}

/** Jinja truthiness: `none`, `false`, `0`, `""`, empty lists and empty mappings are false. */
export function isTruthy(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "string") return value.length > 0;
  if (typeof value === "number") return value !== 0 && !Number.isNaN(value);
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) {
    for (const _ in value) return true;
    return false;
  }
  return true;
}

/**
 * The text a value prints as (`{{ value }}`, `~`, string filters): strings, numbers and
 * booleans as themselves, `none` as nothing. Lists, mappings and host objects have no text a
 * prompt could use (`[object Object]`, a bare comma list), so they throw `UnprintableValue`,
 * which the node that printed them locates and names; callables refuse to print as well.
 */
export function toText(value: unknown): string {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "boolean":
      return String(value);
    case "undefined":
      throw new TemplateValueError("cannot print an undefined value");
    default:
      if (value === null) return "";
      if (value instanceof TemplateCallable) {
        throw new TemplateValueError(`cannot print ${value.displayName}; call it instead`);
      }
      throw new UnprintableValue(
        value as object,
        Array.isArray(value) ? "list" : isPlainObject(value) ? "mapping" : "object",
      );
  }
}

/**
 * Value equality (`==`): primitives by value, lists and mappings element by element. Walking
 * containers is charged to `budget` (shared sub-lists could otherwise make it exponential).
 */
export function valuesEqual(a: unknown, b: unknown, budget: RenderBudget, depth = 1): boolean {
  // Equal-length strings are compared character by character.
  if (typeof a === "string" && typeof b === "string" && a.length === b.length) budget.step(a.length);
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    checkValueNesting(depth);
    budget.step(1 + a.length);
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i], budget, depth + 1)) return false;
    return true;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    checkValueNesting(depth);
    budget.step(1 + keys.length);
    return keys.every((k) => Object.hasOwn(b, k) && valuesEqual(a[k], b[k], budget, depth + 1));
  }
  return false;
}

/** Ordering (`<`, `>`, …) is defined for two numbers or two strings only. */
export function compareOrdered(op: string, a: unknown, b: unknown, budget: RenderBudget): boolean {
  const bothNumbers = typeof a === "number" && typeof b === "number";
  const bothStrings = typeof a === "string" && typeof b === "string";
  if (!bothNumbers && !bothStrings) {
    throw new TemplateValueError(`cannot compare a ${typeName(a)} with a ${typeName(b)} using ${op}`);
  }
  if (bothStrings) budget.step(Math.min(a.length, b.length));
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case "<":
      return x < y;
    case ">":
      return x > y;
    case "<=":
      return x <= y;
    default:
      return x >= y;
  }
}

/** `needle in haystack` for lists, strings and mappings (own keys). */
export function containsValue(haystack: unknown, needle: unknown, budget: RenderBudget): boolean {
  if (Array.isArray(haystack)) {
    budget.step(1 + haystack.length);
    return haystack.some((item) => valuesEqual(item, needle, budget));
  }
  if (typeof haystack === "string") {
    if (typeof needle !== "string") {
      throw new TemplateValueError(`'in <string>' requires a string on the left, got a ${typeName(needle)}`);
    }
    budget.readChars(haystack.length);
    return haystack.includes(needle);
  }
  if (isPlainObject(haystack)) {
    return (
      (typeof needle === "string" || typeof needle === "number") && Object.hasOwn(haystack, String(needle))
    );
  }
  throw new TemplateValueError(`cannot use 'in' on a ${typeName(haystack)}`);
}

/**
 * Arithmetic with Jinja's types: numbers, string/list concatenation with `+`, repetition with
 * `*`. Every string or list it builds is checked against `budget` before it is built.
 */
export function arithmetic(op: string, a: unknown, b: unknown, budget: RenderBudget): unknown {
  if (typeof a === "number" && typeof b === "number") return numeric(op, a, b);
  if (op === "+") {
    if (typeof a === "string" && typeof b === "string") {
      budget.reserve(a.length + b.length, "+");
      return a + b;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      budget.reserve(a.length + b.length, "+");
      budget.step(1 + a.length + b.length);
      return Object.freeze([...a, ...b]);
    }
  }
  if (op === "*") {
    const [seq, times] = typeof b === "number" ? [a, b] : [b, a];
    if (
      typeof times === "number" &&
      Number.isInteger(times) &&
      (typeof seq === "string" || Array.isArray(seq))
    ) {
      return repeat(seq, times, budget);
    }
  }
  throw new TemplateValueError(`unsupported operand types for ${op}: ${typeName(a)} and ${typeName(b)}`);
}

// The size is checked before anything is built, and so is the count itself: an empty sequence
// would otherwise pass the size check and then be walked a billion times.
function repeat(seq: string | readonly unknown[], times: number, budget: RenderBudget): unknown {
  const count = Math.max(times, 0);
  budget.reserve(Math.max(count, seq.length * count), "*");
  if (typeof seq === "string") return seq.repeat(count);
  budget.step(1 + seq.length * count);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) for (const item of seq) out.push(item);
  return Object.freeze(out);
}

function numeric(op: string, a: number, b: number): number {
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "**":
      return a ** b;
  }
  if (b === 0) throw new TemplateValueError("division by zero");
  if (op === "/") return a / b;
  if (op === "//") return Math.floor(a / b);
  return a - b * Math.floor(a / b); // Python's modulo: the sign follows the divisor
}

/** A number for unary `-`/`+`. */
export function toNumberOperand(op: string, value: unknown): number {
  if (typeof value !== "number")
    throw new TemplateValueError(`bad operand type for unary ${op}: ${typeName(value)}`);
  return value;
}
