import { type ParamShorthand, type ParamSpec, params } from "./arguments.js";
import { LimitExceeded, type RenderBudget } from "./budget.js";
import { TemplateValueError, UnprintableValue } from "./errors.js";
import { type CallArguments, getAttribute, isPlainObject, toText, typeName } from "./values.js";

/**
 * A builtin filter: either a fixed signature (`value` first) or its raw arguments. Filters whose
 * result can be much larger than their input check its size with `budget` before building it.
 */
export type FilterDefinition =
  | {
      readonly kind: "bound";
      readonly specs: readonly ParamSpec[];
      readonly impl: (bound: unknown[], budget: RenderBudget) => unknown;
    }
  | {
      readonly kind: "variadic";
      readonly impl: (value: unknown, rest: CallArguments, budget: RenderBudget) => unknown;
    };

export function bound(
  specs: ParamShorthand[],
  impl: (bound: unknown[], budget: RenderBudget) => unknown,
): FilterDefinition {
  return Object.freeze({ kind: "bound", specs: params("value", ...specs), impl });
}

export function variadic(
  impl: (value: unknown, rest: CallArguments, budget: RenderBudget) => unknown,
): FilterDefinition {
  return Object.freeze({ kind: "variadic", impl });
}

/** The items a filter iterates: list items, string characters, mapping keys. */
export function items(value: unknown, filter: string): readonly unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === "string") return Array.from(value);
  if (isPlainObject(value)) return Object.keys(value);
  throw new TemplateValueError(`${filter}: expected a list, string or mapping, got a ${typeName(value)}`);
}

/** The text of a filter's value or argument; a list or mapping is refused (see `toText`). */
export function textOf(value: unknown, filter: string): string {
  if (typeof value === "string") return value;
  try {
    return toText(value);
  } catch (error) {
    if (error instanceof UnprintableValue) throw error.within(`filter '${filter}'`);
    if (!(error instanceof TemplateValueError) || error instanceof LimitExceeded) throw error;
    throw new TemplateValueError(`${filter}: ${error.message}`);
  }
}

export function stringArg(value: unknown, filter: string, name: string): string {
  if (typeof value !== "string")
    throw new TemplateValueError(`${filter}: '${name}' must be a string, got a ${typeName(value)}`);
  return value;
}

export function intArg(value: unknown, filter: string, name: string): number {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new TemplateValueError(`${filter}: '${name}' must be an integer, got a ${typeName(value)}`);
  }
  return value;
}

/**
 * A getter for an `attribute=` argument: a dotted path (`"a.b"`, `"items.0"`) looked up under
 * the same rules as `a.b` in a template, so `constructor` & co. stay unreachable. Missing → error.
 */
export function attributeGetter(path: unknown, filter: string): (item: unknown) => unknown {
  if (typeof path === "number") path = String(path);
  if (typeof path !== "string" || path === "") {
    throw new TemplateValueError(`${filter}: 'attribute' must be a non-empty string`);
  }
  const segments = path.split(".").map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  return (item) => {
    let value = item;
    for (const segment of segments) {
      value = getAttribute(value, segment);
      if (value === undefined)
        throw new TemplateValueError(`${filter}: attribute '${path}' is undefined on a ${typeName(item)}`);
    }
    return value;
  };
}

/** Sort key comparison shared by sort/dictsort/groupby/unique/min/max. */
export function compareKeys(
  a: unknown,
  b: unknown,
  caseSensitive: boolean,
  filter: string,
  budget: RenderBudget,
): number {
  // Lower-casing and comparing strings walks their characters.
  if (typeof a === "string" && typeof b === "string") budget.step(a.length + b.length);
  let x = a;
  let y = b;
  if (!caseSensitive) {
    if (typeof x === "string") x = x.toLowerCase();
    if (typeof y === "string") y = y.toLowerCase();
  }
  const comparable =
    (typeof x === "number" && typeof y === "number") || (typeof x === "string" && typeof y === "string");
  if (!comparable) {
    if (x === y) return 0;
    throw new TemplateValueError(`${filter}: cannot order a ${typeName(a)} against a ${typeName(b)}`);
  }
  return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
}

/** A frozen list, as every filter returns: templates never get a mutable array from us. */
export function frozenList<T>(list: T[]): readonly T[] {
  return Object.freeze(list);
}

export function frozenMapping(entries: Iterable<[string, unknown]>): Readonly<Record<string, unknown>> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of entries) out[k] = v;
  return Object.freeze(out);
}
