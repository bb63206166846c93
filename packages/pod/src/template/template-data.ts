import { PodUsageError } from "../errors.js";
import { isPlainObject, RESERVED_ATTRIBUTES } from "./values.js";

/** What callers may pass as template context: JSON-like plain data. */
export type TemplateData =
  | string
  | number
  | boolean
  | null
  | undefined
  | readonly TemplateData[]
  | { readonly [key: string]: TemplateData };

const MAX_DEPTH = 64;

/**
 * Deep-copies caller data into frozen, null-prototype plain data, so a template can neither
 * mutate what it was given nor reach a prototype through it. `undefined` properties are
 * dropped (a key is either present or absent). Anything that is not plain data (functions,
 * class instances, symbols, cycles) is a programming error of the caller: `TypeError`.
 */
export function freezeTemplateData(data: unknown): Readonly<Record<string, unknown>> {
  if (!isPlainObject(data)) throw new PodUsageError("template context must be a plain object");
  return copyObject(data, "context", 0);
}

function copyValue(value: unknown, path: string, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return value;
    case "object":
      if (value === null) return null;
      if (depth >= MAX_DEPTH)
        throw new PodUsageError(`template context is nested too deeply (or cyclic) at ${path}`);
      if (Array.isArray(value)) {
        return Object.freeze(
          value.map((item, i) => copyValue(item === undefined ? null : item, `${path}[${i}]`, depth + 1)),
        );
      }
      if (isPlainObject(value)) return copyObject(value, path, depth + 1);
      throw new PodUsageError(
        `template context value at ${path} is not plain data (${value.constructor?.name ?? "object"})`,
      );
    default:
      throw new PodUsageError(
        `template context value at ${path} is a ${typeof value}; only plain data is allowed`,
      );
  }
}

function copyObject(
  source: Record<string, unknown>,
  path: string,
  depth: number,
): Readonly<Record<string, unknown>> {
  const copy: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(source)) {
    if (RESERVED_ATTRIBUTES.has(key))
      throw new PodUsageError(`template context key ${path}.${key} is reserved`);
    const value = source[key];
    if (value !== undefined) copy[key] = copyValue(value, `${path}.${key}`, depth);
  }
  return Object.freeze(copy);
}
