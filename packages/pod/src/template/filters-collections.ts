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
  MAX_BUILT_LENGTH,
  TemplateCallable,
  TemplateObject,
  typeName,
} from "./values.js";

/** Applies a filter by name on behalf of `map`; provided by the filter table. */
export type FilterApplier = (name: string, value: unknown, rest: CallArguments) => unknown;

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
  ([v, sep, attribute]) => {
    const get = attribute === null ? null : attributeGetter(attribute, "join");
    const separator = textOf(sep, "join");
    return items(v, "join")
      .map((item) => textOf(get ? get(item) : item, "join"))
      .join(separator);
  },
);

const sort = bound(
  [
    ["reverse", false],
    ["case_sensitive", false],
    ["attribute", null],
  ],
  ([v, rev, cs, attribute]) => {
    const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, "sort");
    const sorted = [...items(v, "sort")].sort((a, b) => compareKeys(get(a), get(b), Boolean(cs), "sort"));
    return frozenList(rev ? sorted.reverse() : sorted);
  },
);

const dictsort = bound(
  [
    ["case_sensitive", false],
    ["by", "key"],
    ["reverse", false],
  ],
  ([v, cs, by, rev]) => {
    if (!isPlainObject(v)) throw new TemplateValueError(`dictsort: expected a mapping, got a ${typeName(v)}`);
    if (by !== "key" && by !== "value")
      throw new TemplateValueError(`dictsort: 'by' must be "key" or "value"`);
    const at = by === "key" ? 0 : 1;
    const pairs = Object.entries(v).sort((a, b) => compareKeys(a[at], b[at], Boolean(cs), "dictsort"));
    return frozenList((rev ? pairs.reverse() : pairs).map((pair) => Object.freeze(pair)));
  },
);

const itemsFilter = bound([], ([v]) => {
  if (!isPlainObject(v)) throw new TemplateValueError(`items: expected a mapping, got a ${typeName(v)}`);
  return frozenList(Object.entries(v).map((pair) => Object.freeze(pair)));
});

const reverse = bound([], ([v]) => {
  if (typeof v === "string") return Array.from(v).reverse().join("");
  return frozenList([...items(v, "reverse")].reverse());
});

const unique = bound(
  [
    ["case_sensitive", false],
    ["attribute", null],
  ],
  ([v, cs, attribute]) => {
    const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, "unique");
    const seen = new Set<unknown>();
    const out: unknown[] = [];
    for (const item of items(v, "unique")) {
      let key = get(item);
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
    ([v, cs, attribute]) => {
      const get = attribute === null ? (x: unknown) => x : attributeGetter(attribute, name);
      const list = items(v, name);
      if (list.length === 0) throw new TemplateValueError(`${name}: the sequence is empty`);
      return list.reduce((best, item) =>
        pick(compareKeys(get(item), get(best), Boolean(cs), name)) ? item : best,
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
    return items(v, "sum").reduce((total: number, item) => {
      const n = get(item);
      if (typeof n !== "number") throw new TemplateValueError(`sum: cannot add a ${typeName(n)}`);
      return total + n;
    }, start as number);
  },
);

const batch = bound(["linecount", ["fill_with", null]], ([v, count, fill]) => {
  const size = intArg(count, "batch", "linecount");
  if (size < 1 || size > MAX_BUILT_LENGTH) {
    throw new TemplateValueError(`batch: 'linecount' must be between 1 and ${MAX_BUILT_LENGTH}`);
  }
  const list = items(v, "batch");
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
  ([v, attribute, fallback, cs]) => {
    const strict = attributeGetter(attribute, "groupby");
    const get = (item: unknown) => {
      try {
        return strict(item);
      } catch (error) {
        if (fallback !== null) return fallback;
        throw error;
      }
    };
    const sorted = [...items(v, "groupby")].sort((a, b) =>
      compareKeys(get(a), get(b), Boolean(cs), "groupby"),
    );
    const groups: { grouper: unknown; list: unknown[] }[] = [];
    for (const item of sorted) {
      const key = get(item);
      const group = groups.at(-1);
      if (group && compareKeys(group.grouper, key, Boolean(cs), "groupby") === 0) group.list.push(item);
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
  return variadic((v, rest) => {
    const [attribute, ...afterAttribute] = byAttribute ? rest.positional : [null, ...rest.positional];
    const get = byAttribute ? attributeGetter(attribute, name) : (item: unknown) => item;
    const [testName, ...testArgs] = afterAttribute;
    const predicate =
      testName === undefined
        ? isTruthy
        : (value: unknown) =>
            runTest(stringArg(testName, name, "test"), value, {
              positional: testArgs,
              keywords: rest.keywords,
            });
    return frozenList(items(v, name).filter((item) => predicate(get(item)) === keep));
  });
}

function mapFilter(apply: FilterApplier): FilterDefinition {
  return variadic((v, rest) => {
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
    return frozenList(list.map((item) => apply(name, item, args)));
  });
}

const tojson = bound([["indent", null]], ([v, indent]) => {
  const space = indent === null ? undefined : intArg(indent, "tojson", "indent");
  return JSON.stringify(
    v,
    (_key, value) => {
      if (value instanceof TemplateCallable || value instanceof TemplateObject) {
        throw new TemplateValueError("tojson: cannot serialize a callable or host object");
      }
      return value;
    },
    space,
  );
});

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
