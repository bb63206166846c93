import { z } from "zod";
import type { ManifestIssue } from "../errors.js";
import { formatKeyPath, formatSchemaPath } from "../key-path.js";
import type { KeyLocator } from "../toml/locate-keys.js";
import { closestKey, knownKeysAt, schemaAt } from "./known-keys.js";
import { RENAMED_KEYS } from "./renamed-keys.js";

/** Where a layer came from, for locating issues. */
export interface IssueOrigin {
  file?: string;
  overlay?: string;
  locator?: KeyLocator;
}

/**
 * Turns zod issues for one layer into manifest issues with our own wording: key path, what was
 * expected, what was found (in TOML terms), and the line when the source can tell.
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
  origin: IssueOrigin,
): ManifestIssue[] {
  const out: ManifestIssue[] = [];
  const replacedByRename = renamedTargets(issues);
  for (const issue of issues) {
    // `path = "x"` under a renamed key already says "use target instead"; "target missing" is noise.
    if (issue.code === "invalid_type" && replacedByRename.has(formatKeyPath(keySegments(issue.path))))
      continue;
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        out.push(issueAtKey(origin, path, unknownKeyProblem(schema, issue.path, key, valueAt(input, path))));
      }
      continue;
    }
    const node = schemaAt(schema, issue.path);
    const wantsInteger = node instanceof z.ZodNumber && node.format === "safeint";
    out.push(issueAtKey(origin, issue.path, problemOf(issue, valueAt(input, issue.path), wantsInteger)));
  }
  // Report in reading order; issues without a line keep their place after those with one.
  return out.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
}

/** Key paths that an unknown-but-renamed key in the same table stands in for. */
function renamedTargets(issues: readonly z.core.$ZodIssue[]): Set<string> {
  const out = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== "unrecognized_keys") continue;
    const table = formatSchemaPath(issue.path);
    for (const key of issue.keys) {
      const use = RENAMED_KEYS[formatSchemaPath([...issue.path, key])]?.use;
      const dot = use?.lastIndexOf(".") ?? -1;
      if (use !== undefined && use.slice(0, Math.max(dot, 0)) === table) {
        out.add(formatKeyPath([...keySegments(issue.path), use.slice(dot + 1)]));
      }
    }
  }
  return out;
}

function keySegments(path: readonly PropertyKey[]): (string | number)[] {
  return path.filter((s): s is string | number => typeof s !== "symbol");
}

/** The issue `problem` at key `path` of `origin`: its key path, file or overlay, and line when the source can tell. */
export function issueAtKey(
  origin: IssueOrigin,
  path: readonly PropertyKey[],
  problem: string,
): ManifestIssue {
  const segments = keySegments(path);
  const issue: ManifestIssue = { problem, keyPath: formatKeyPath(segments) };
  if (origin.file !== undefined) issue.file = origin.file;
  if (origin.overlay !== undefined) issue.overlay = origin.overlay;
  const line = origin.locator?.lineOf(segments);
  if (line !== undefined) issue.line = line;
  return issue;
}

function unknownKeyProblem(
  schema: z.ZodType,
  tablePath: readonly PropertyKey[],
  key: string,
  value: unknown,
): string {
  const renamed = RENAMED_KEYS[formatSchemaPath([...tablePath, key])];
  if (renamed) return `renamed: use "${renamed.use}" instead${renamed.note ? ` (${renamed.note})` : ""}`;
  const known = knownKeysAt(schema, tablePath);
  const what = tablePath.length === 0 && isTable(value) ? "unknown table" : "unknown key";
  const guess = closestKey(key, known);
  if (guess) return `${what}; did you mean "${guess}"?`;
  const where = tablePath.length === 0 ? "at the top level" : `in [${formatSchemaPath(tablePath)}]`;
  return known.length > 0 ? `${what}; keys allowed ${where}: ${known.join(", ")}` : what;
}

function problemOf(issue: z.core.$ZodIssue, value: unknown, wantsInteger: boolean): string {
  const got = value === undefined ? "" : `, got ${describeValue(value)}`;
  switch (issue.code) {
    case "invalid_type": {
      const expected = expectedType(wantsInteger ? "int" : issue.expected);
      if (value === undefined) return `missing required key (expected ${expected})`;
      return `expected ${expected}${got}`;
    }
    case "too_small":
      if (issue.origin === "string") return "must not be empty";
      if (issue.origin === "array") return `must have at least ${issue.minimum} item(s)`;
      return `must be ${issue.inclusive === false ? ">" : "≥"} ${issue.minimum}${got}`;
    case "too_big":
      if (issue.origin === "string" || issue.origin === "array")
        return `is too long (at most ${issue.maximum})`;
      return `must be ${issue.inclusive === false ? "<" : "≤"} ${issue.maximum}${got}`;
    case "invalid_value":
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(" | ")}${got}`;
    case "invalid_format":
    case "custom":
      return issue.message.startsWith("expected") ? `${issue.message}${got}` : issue.message;
    default:
      return `${issue.message}${got}`;
  }
}

function expectedType(expected: string): string {
  switch (expected) {
    case "int":
      return "an integer";
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "boolean":
      return "true or false";
    case "array":
      return "an array";
    case "object":
    case "record":
      return "a table";
    default:
      return expected;
  }
}

/** A TOML value as a person reads it in an error message (long strings shortened). */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return `float ${value}`;
    return Number.isInteger(value) ? `integer ${value}` : `float ${value}`;
  }
  if (typeof value === "bigint") return `integer ${value}`;
  if (typeof value === "boolean") return `boolean ${value}`;
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  if (isTable(value)) return "a table";
  return "a date/time";
}

function isTable(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype; // smol-toml builds tables with a null prototype
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const segment of path) {
    if (typeof node !== "object" || node === null) return undefined;
    if (!Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[segment];
  }
  return node;
}
