import { ScriptError } from "../errors.js";
import { splitIntoChunks } from "./render-context.js";

/** One entry of Vertex's streamed function-call arguments (`functionCall.partialArgs[]`). */
export interface PartialArg {
  jsonPath: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: null;
  willContinue?: boolean;
}

/**
 * Flattens tool arguments into `partialArgs` entries in document order, strings cut into `chunkSize` pieces
 * continued with `willContinue`, empty containers as bare paths (`$.list[]` for an empty array).
 */
export function flattenToPartialArgs(
  args: unknown,
  chunkSize: number | undefined,
  where: string,
): PartialArg[] {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new ScriptError(
      `${where}: google tool call arguments must be a JSON object to be streamed in pieces`,
    );
  }
  const out: PartialArg[] = [];
  visit(args, "$", out, chunkSize, where);
  return out;
}

function visit(
  value: unknown,
  path: string,
  out: PartialArg[],
  chunkSize: number | undefined,
  where: string,
) {
  if (typeof value === "string") {
    const pieces = splitIntoChunks(value, chunkSize, where);
    pieces.forEach((stringValue, i) => {
      out.push({ jsonPath: path, stringValue, ...(i < pieces.length - 1 ? { willContinue: true } : {}) });
    });
  } else if (typeof value === "number") {
    out.push({ jsonPath: path, numberValue: value });
  } else if (typeof value === "boolean") {
    out.push({ jsonPath: path, boolValue: value });
  } else if (value === null) {
    out.push({ jsonPath: path, nullValue: null });
  } else if (Array.isArray(value)) {
    if (value.length === 0) out.push({ jsonPath: `${path}[]` });
    value.forEach((item, i) => {
      visit(item, `${path}[${i}]`, out, chunkSize, where);
    });
  } else if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0 && path !== "$") out.push({ jsonPath: path });
    for (const [key, item] of entries) visit(item, `${path}.${key}`, out, chunkSize, where);
  }
}
