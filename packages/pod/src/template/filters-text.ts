import { HEAVY_TEXT_STEPS, type RenderBudget } from "./budget.js";
import { TemplateValueError } from "./errors.js";
import { bound, type FilterDefinition, intArg, stringArg, textOf } from "./filter-support.js";
import { typeName } from "./values.js";

/** A width argument, capped so a template cannot ask for gigabytes of padding. */
function widthArg(value: unknown, filter: string, budget: RenderBudget): number {
  const width = intArg(value, filter, "width");
  budget.reserve(width, `${filter}(${width})`);
  return width;
}

/** Charges the extra steps of a word-by-word text filter over `text`; returns it. */
function heavy(text: string, budget: RenderBudget): string {
  budget.readChars(text.length, HEAVY_TEXT_STEPS - 1);
  return text;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&#34;",
  "'": "&#39;",
};

const upper = bound([], ([v]) => textOf(v, "upper").toUpperCase());
const lower = bound([], ([v]) => textOf(v, "lower").toLowerCase());

const capitalize = bound([], ([v]) => {
  const s = textOf(v, "capitalize");
  return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
});

const title = bound([], ([v], budget) =>
  heavy(textOf(v, "title"), budget).replace(
    /[A-Za-z0-9\u00C0-\uFFFF]+/g,
    (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase(),
  ),
);

const trim = bound([["chars", null]], ([v, chars], budget) => {
  const s = textOf(v, "trim");
  if (chars === null) return s.trim();
  heavy(s, budget);
  const set = new Set(Array.from(stringArg(chars, "trim", "chars")));
  const list = Array.from(s);
  let start = 0;
  let end = list.length;
  while (start < end && set.has(list[start] as string)) start++;
  while (end > start && set.has(list[end - 1] as string)) end--;
  return list.slice(start, end).join("");
});

const replace = bound(["old", "new", ["count", null]], ([v, oldArg, newArg, count], budget) => {
  const s = textOf(v, "replace");
  const from = textOf(oldArg, "replace");
  const to = textOf(newArg, "replace");
  const limit = count === null ? Number.POSITIVE_INFINITY : intArg(count, "replace", "count");
  if (from === "") return s;
  const parts = heavy(s, budget).split(from);
  const replaced = Math.max(0, Math.min(parts.length - 1, limit));
  budget.reserve(s.length + replaced * (to.length - from.length), "replace");
  if (parts.length - 1 <= limit) return parts.join(to);
  return parts.slice(0, limit + 1).join(to) + from + parts.slice(limit + 1).join(from);
});

const indent = bound(
  [
    ["width", 4],
    ["first", false],
    ["blank", false],
  ],
  ([v, width, first, blank], budget) => {
    const pad =
      typeof width === "string" ? width : " ".repeat(Math.max(0, widthArg(width, "indent", budget)));
    const lines = textOf(v, "indent").split("\n");
    budget.reserve(lines.length * (pad.length + 1) + lines.reduce((n, l) => n + l.length, 0), "indent");
    return lines
      .map((line, i) => {
        if (i === 0 && !first) return line;
        if (line === "" && !blank) return line;
        return pad + line;
      })
      .join("\n");
  },
);

const center = bound([["width", 80]], ([v, width], budget) => {
  const s = textOf(v, "center");
  const w = widthArg(width, "center", budget);
  if (s.length >= w) return s;
  const left = Math.floor((w - s.length) / 2);
  return " ".repeat(left) + s + " ".repeat(w - s.length - left);
});

const truncate = bound(
  [
    ["length", 255],
    ["killwords", false],
    ["end", "..."],
  ],
  ([v, length, killwords, end]) => {
    const s = textOf(v, "truncate");
    const max = intArg(length, "truncate", "length");
    const tail = stringArg(end, "truncate", "end");
    if (s.length <= max) return s;
    if (killwords) return s.slice(0, max) + tail;
    const cut = s.lastIndexOf(" ", max);
    return s.slice(0, cut === -1 ? max : cut) + tail;
  },
);

const wordcount = bound(
  [],
  ([v], budget) => heavy(textOf(v, "wordcount"), budget).match(/\w+/gu)?.length ?? 0,
);

const escapeHtml = bound([], ([v]) => textOf(v, "escape").replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c));

const string = bound([], ([v]) => textOf(v, "string"));

const intFilter = bound(
  [
    ["default", 0],
    ["base", 10],
  ],
  ([v, fallback, base]) => {
    if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : fallback;
    if (typeof v === "boolean") return v ? 1 : 0;
    if (typeof v !== "string") return fallback;
    const n = Number.parseInt(v.trim(), intArg(base, "int", "base"));
    return Number.isNaN(n) ? fallback : n;
  },
);

const floatFilter = bound([["default", 0]], ([v, fallback]) => {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v !== "string" || v.trim() === "") return fallback;
  const n = Number(v.trim());
  return Number.isNaN(n) ? fallback : n;
});

const abs = bound([], ([v]) => {
  if (typeof v !== "number") throw new TemplateValueError(`abs: expected a number, got a ${typeName(v)}`);
  return Math.abs(v);
});

const round = bound(
  [
    ["precision", 0],
    ["method", "common"],
  ],
  ([v, precision, method]) => {
    if (typeof v !== "number") throw new TemplateValueError(`round: expected a number, got a ${typeName(v)}`);
    const factor = 10 ** intArg(precision, "round", "precision");
    const fn =
      method === "ceil"
        ? Math.ceil
        : method === "floor"
          ? Math.floor
          : method === "common"
            ? Math.round
            : null;
    if (!fn) throw new TemplateValueError(`round: method must be "common", "ceil" or "floor"`);
    return fn(v * factor) / factor;
  },
);

/** Filters over text and numbers. */
export const TEXT_FILTERS: ReadonlyArray<readonly [string, FilterDefinition]> = [
  ["upper", upper],
  ["lower", lower],
  ["capitalize", capitalize],
  ["title", title],
  ["trim", trim],
  ["replace", replace],
  ["indent", indent],
  ["center", center],
  ["truncate", truncate],
  ["wordcount", wordcount],
  ["escape", escapeHtml],
  ["e", escapeHtml],
  ["safe", bound([], ([v]) => v)],
  ["string", string],
  ["int", intFilter],
  ["float", floatFilter],
  ["abs", abs],
  ["round", round],
];
