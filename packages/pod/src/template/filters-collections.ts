import { checkValueNesting, HEAVY_TEXT_STEPS, type RenderBudget } from "./budget.js";
import { TemplateValueError } from "./errors.js";
import {
  attributeGetter,
  bound,
  compareKeys,
  type FilterDefinition,
  frozenList,
  frozenMapping,
  intArg,
  items,
  stringArg,
  textOf,
  variadic,
} from "./filter-support.js";
import { runTest } from "./tests.js";
import {
  type CallArguments,
  getAttribute,
  isPlainObject,
  isTruthy,
  TemplateCallable,
  TemplateObject,
  typeName,
} from "./values.js";

/** Applies a filter by name on behalf of `map`; provided by the filter table. */
export type FilterApplier = (
  name: string,
  value: unknown,
  rest: CallArguments,
  budget: RenderBudget,
) => unknown;

/** Charges sorting `list` (n·log n comparisons) before it happens; returns the list. */
function sortable<T>(list: T[] | readonly T[], budget: RenderBudget): T[] {
  budget.step(list.length * Math.ceil(Math.log2(list.length + 1)));
  return list as T[];
}

const first = bound([], ([v]) => {
  const list = items(v, "first");
  if (list.length === 0) throw new TemplateValueError("first: the sequence is empty");
  return list[0];
});

const last = bound([], ([v]) => {
  const list = items(v, "last");
  if (list.length === 0) throw new TemplateValueError("last: the sequence is empty");
  return list[list.length - 1];
});

const length = bound([], ([v]) => {
  if (typeof v === "string" || Array.isArray(v)) return v.length;
  if (isPlainObject(v)) return Object.keys(v).length;
  throw new TemplateValueError(`length: a ${typeName(v)} has no length`);
});

const join = bound(
  [
    ["d", ""],
    ["attribute", null],
  ],
  ([v, sep, attribute], budget) => {
    const get = attribute === null ? null : attributeGetter(attribute, "join");
    const separator = textOf(sep, "join");
    const list = items(v, "join");
    // The length is known before joining: a list of a million references to one long string
    // must not be joined first and measured after.
    let length = Math.max(0, list.length - 1) * separator.length;
    const parts = list.map((item) => {
      const text = textOf(get ? get(item) : item, "join");
      length += text.length;
      if (length > budget.limits.maxLength) budget.reserve(length, "join");
      return text;
    });
    budget.reserve(length, "join");
    return parts.join(separator);
  },
);

const sort = bound(
  [
    ["reverse", false],
    ["case_sensitive", false],
    ["attribute", null],
  ],
  ([v, rev, cs, attribute], budget) => {
    const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, "sort");
    const sorted = [...sortable(items(v, "sort"), budget)].sort((a, b) =>
      compareKeys(get(a), get(b), Boolean(cs), "sort", budget),
    );
    return frozenList(rev ? sorted.reverse() : sorted);
  },
);

const dictsort = bound(
  [
    ["case_sensitive", false],
    ["by", "key"],
    ["reverse", false],
  ],
  ([v, cs, by, rev], budget) => {
    if (!isPlainObject(v)) throw new TemplateValueError(`dictsort: expected a mapping, got a ${typeName(v)}`);
    if (by !== "key" && by !== "value")
      throw new TemplateValueError(`dictsort: 'by' must be "key" or "value"`);
    const at = by === "key" ? 0 : 1;
    const pairs = sortable(Object.entries(v), budget).sort((a, b) =>
      compareKeys(a[at], b[at], Boolean(cs), "dictsort", budget),
    );
    return frozenList((rev ? pairs.reverse() : pairs).map((pair) => Object.freeze(pair)));
  },
);

const itemsFilter = bound([], ([v]) => {
  if (!isPlainObject(v)) throw new TemplateValueError(`items: expected a mapping, got a ${typeName(v)}`);
  return frozenList(Object.entries(v).map((pair) => Object.freeze(pair)));
});

const reverse = bound([], ([v], budget) => {
  if (typeof v === "string") {
    budget.readChars(v.length, HEAVY_TEXT_STEPS - 1);
    return Array.from(v).reverse().join("");
  }
  return frozenList([...items(v, "reverse")].reverse());
});

const unique = bound(
  [
    ["case_sensitive", false],
    ["attribute", null],
  ],
  ([v, cs, attribute], budget) => {
    const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, "unique");
    const seen = new Set<unknown>();
    const out: unknown[] = [];
    for (const item of items(v, "unique")) {
      let key = get(item);
      if (typeof key === "string") budget.step(key.length); // hashing (and lower-casing) it
      if (!cs && typeof key === "string") key = key.toLowerCase();
      if (!seen.has(key)) {
        seen.add(key);
        out.push(item);
      }
    }
    return frozenList(out);
  },
);

function extreme(name: string, pick: (order: number) => boolean): FilterDefinition {
  return bound(
    [
      ["case_sensitive", false],
      ["attribute", null],
    ],
    ([v, cs, attribute], budget) => {
      const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, name);
      const list = items(v, name);
      if (list.length === 0) throw new TemplateValueError(`${name}: the sequence is empty`);
      return list.reduce((best, item) =>
        pick(compareKeys(get(item), get(best), Boolean(cs), name, budget)) ? item : best,
      );
    },
  );
}

const sum = bound(
  [
    ["attribute", null],
    ["start", 0],
  ],
  ([v, attribute, start]) => {
    const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, "sum");
    // A string start would turn the sum into a concatenation of every item.
    if (typeof start !== "number") throw new TemplateValueError(`sum: 'start' must be a number`);
    return items(v, "sum").reduce((total: number, item) => {
      const n = get(item);
      if (typeof n !== "number") throw new TemplateValueError(`sum: cannot add a ${typeName(n)}`);
      return total + n;
    }, start);
  },
);

const batch = bound(["linecount", ["fill_with", null]], ([v, count, fill], budget) => {
  const size = intArg(count, "batch", "linecount");
  if (size < 1) throw new TemplateValueError("batch: 'linecount' must be at least 1");
  const list = items(v, "batch");
  const rows = Math.ceil(list.length / size);
  budget.reserve(rows + (fill === null ? list.length : rows * size), "batch");
  const out: (readonly unknown[])[] = [];
  for (let i = 0; i < list.length; i += size) {
    const row = list.slice(i, i + size);
    while (fill !== null && row.length < size) row.push(fill);
    out.push(frozenList(row));
  }
  return frozenList(out);
});

const groupby = bound(
  ["attribute", ["default", null], ["case_sensitive", false]],
  ([v, attribute, fallback, cs], budget) => {
    const strict = attributeGetter(attribute, "groupby");
    const get = (item: unknown) => {
      try {
        return strict(item);
      } catch (error) {
        if (fallback !== null) return fallback;
        throw error;
      }
    };
    const sorted = [...sortable(items(v, "groupby"), budget)].sort((a, b) =>
      compareKeys(get(a), get(b), Boolean(cs), "groupby", budget),
    );
    const groups: { grouper: unknown; list: unknown[] }[] = [];
    for (const item of sorted) {
      const key = get(item);
      const group = groups.at(-1);
      if (group && compareKeys(group.grouper, key, Boolean(cs), "groupby", budget) === 0)
        group.list.push(item);
      else groups.push({ grouper: key, list: [item] });
    }
    return frozenList(
      groups.map((g) =>
        frozenMapping([
          ["grouper", g.grouper],
          ["list", frozenList(g.list)],
        ]),
      ),
    );
  },
);

/**
 * `select`/`reject` (test each item) and `selectattr`/`rejectattr` (test one attribute of each
 * item): the first positional argument of the *attr forms is the attribute, then the test name
 * and its arguments; without a test, truthiness decides.
 */
function selectFilter(name: string, keep: boolean, byAttribute: boolean): FilterDefinition {
  return variadic((v, rest, budget) => {
    const [attribute, ...afterAttribute] = byAttribute ? rest.positional : [null, ...rest.positional];
    const get = byAttribute ? attributeGetter(attribute, name) : (item: unknown) => item;
    const [testName, ...testArgs] = afterAttribute;
    const predicate =
      testName === undefined
        ? isTruthy
        : (value: unknown) =>
            runTest(
              stringArg(testName, name, "test"),
              value,
              { positional: testArgs, keywords: rest.keywords },
              budget,
            );
    return frozenList(items(v, name).filter((item) => predicate(get(item)) === keep));
  });
}

function mapFilter(apply: FilterApplier): FilterDefinition {
  return variadic((v, rest, budget) => {
    const list = items(v, "map");
    if (rest.keywords?.has("attribute")) {
      const get = attributeGetter(rest.keywords.get("attribute"), "map");
      const hasDefault = rest.keywords.has("default");
      return frozenList(
        list.map((item) => {
          try {
            return get(item);
          } catch (error) {
            if (hasDefault) return rest.keywords?.get("default");
            throw error;
          }
        }),
      );
    }
    const [filterName, ...filterArgs] = rest.positional;
    const name = stringArg(filterName, "map", "filter");
    const args: CallArguments = { positional: filterArgs, keywords: rest.keywords };
    return frozenList(list.map((item) => apply(name, item, args, budget)));
  });
}

const tojson = bound([["indent", null]], ([v, indent], budget) => {
  const space = indent === null ? undefined : intArg(indent, "tojson", "indent");
  // Measured (and charged) before serializing: shared sub-lists make the text far larger than
  // the value, and JSON.stringify would build all of it first.
  budget.reserve(jsonSizeAtLeast(v, budget, 1), "tojson");
  return JSON.stringify(v, undefined, space);
});

/** A lower bound of the length of `value` as JSON; refuses callables and host objects. */
function jsonSizeAtLeast(value: unknown, budget: RenderBudget, depth: number): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value !== "object" || value === null) return 4;
  if (value instanceof TemplateCallable || value instanceof TemplateObject) {
    throw new TemplateValueError("tojson: cannot serialize a callable or host object");
  }
  checkValueNesting(depth);
  const max = budget.limits.maxLength;
  let size = 2;
  const entries: [string | null, unknown][] = Array.isArray(value)
    ? value.map((item) => [null, item])
    : Object.entries(value);
  budget.step(1 + entries.length);
  for (const [key, item] of entries) {
    size += 1 + (key === null ? 0 : key.length + 3) + jsonSizeAtLeast(item, budget, depth + 1);
    if (size > max) return size;
  }
  return size;
}

const attr = bound(["name"], ([v, name]) => {
  const value = getAttribute(v, name);
  if (value === undefined)
    throw new TemplateValueError(`attr: '${String(name)}' is undefined on a ${typeName(v)}`);
  return value;
});

/** Filters over lists and mappings; `apply` lets `map` run other filters. */
export function collectionFilters(apply: FilterApplier): ReadonlyArray<readonly [string, FilterDefinition]> {
  const defaultFilter = bound(
    [
      ["default_value", ""],
      ["boolean", false],
    ],
    ([v, fallback, boolean]) => (v === undefined || (boolean && !isTruthy(v)) ? fallback : v),
  );
  return [
    ["default", defaultFilter],
    ["d", defaultFilter],
    ["first", first],
    ["last", last],
    ["length", length],
    ["count", length],
    ["join", join],
    ["list", bound([], ([v]) => frozenList([...items(v, "list")]))],
    ["items", itemsFilter],
    ["dictsort", dictsort],
    ["sort", sort],
    ["reverse", reverse],
    ["unique", unique],
    ["min", extreme("min", (order) => order < 0)],
    ["max", extreme("max", (order) => order > 0)],
    ["sum", sum],
    ["batch", batch],
    ["groupby", groupby],
    ["select", selectFilter("select", true, false)],
    ["reject", selectFilter("reject", false, false)],
    ["selectattr", selectFilter("selectattr", true, true)],
    ["rejectattr", selectFilter("rejectattr", false, true)],
    ["map", mapFilter(apply)],
    ["tojson", tojson],
    ["dump", tojson],
    ["attr", attr],
  ];
}
