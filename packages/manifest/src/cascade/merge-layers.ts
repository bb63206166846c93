import { formatKeyPath, type KeySegment } from "../key-path.js";
import type { ParsedLayer, Provenance } from "./layer.js";

/** Lists of rules accumulate across layers instead of being replaced. */
export const RULE_LISTS: ReadonlySet<string> = new Set([
  "scope.allow",
  "scope.deny",
  "mcp.server",
  "schedule",
  "permissions.rule",
]);

/**
 * Tables taken whole from the topmost layer that sets them, never merged key by key: an output
 * schema merged with another layer's would be a schema nobody wrote.
 */
const WHOLE_TABLE = /^(?:subpods\.[A-Za-z0-9_-]+\.)?output\.schema$/;

/** The merged document and, for every key path in it, the layer that set it. */
export interface MergedLayers {
  data: Record<string, unknown>;
  provenance: Map<string, Provenance>;
}

/**
 * Folds layers, lowest first, by the cascade rules (docs/manifest.md): a scalar (or a plain list) from an upper layer
 * replaces the lower one, tables merge field by field (an output schema is replaced whole), rule
 * lists accumulate. Provenance keys are merged key paths (`scope.allow[3].target`); each entry
 * names the layer and the key path as written in that layer, with its line.
 */
export function mergeLayers(layers: readonly ParsedLayer[]): MergedLayers {
  const data: Record<string, unknown> = {};
  const provenance = new Map<string, Provenance>();
  for (const parsed of layers) {
    const record = (merged: KeySegment[], local: KeySegment[]) => {
      const entry: Provenance = { layer: parsed.layer, keyPath: formatKeyPath(local) };
      const line = parsed.locator?.lineOf(local);
      if (line !== undefined) entry.line = line;
      provenance.set(formatKeyPath(merged), entry);
    };
    const forget = (merged: KeySegment[]) => {
      const prefix = formatKeyPath(merged);
      for (const key of provenance.keys())
        if (key.startsWith(`${prefix}.`) || key.startsWith(`${prefix}[`)) provenance.delete(key);
    };
    mergeTable(data, parsed.data as Record<string, unknown>, [], [], record, forget);
  }
  return { data, provenance };
}

type RecordProvenance = (merged: KeySegment[], local: KeySegment[]) => void;
type ForgetProvenance = (merged: KeySegment[]) => void;

function mergeTable(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  mergedPath: KeySegment[],
  localPath: KeySegment[],
  record: RecordProvenance,
  forget: ForgetProvenance,
): void {
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const merged = [...mergedPath, key];
    const local = [...localPath, key];
    if (WHOLE_TABLE.test(formatKeyPath(merged))) {
      target[key] = structuredClone(value);
      forget(merged);
      recordTree(value, merged, local, record);
    } else if (RULE_LISTS.has(formatKeyPath(merged)) && Array.isArray(value)) {
      const list = Array.isArray(target[key]) ? (target[key] as unknown[]) : [];
      target[key] = list;
      record(merged, local);
      value.forEach((item, i) => {
        list.push(structuredClone(item));
        recordTree(item, [...merged, list.length - 1], [...local, i], record);
      });
    } else if (isTable(value)) {
      const table = isTable(target[key]) ? target[key] : {};
      target[key] = table;
      record(merged, local);
      mergeTable(table, value, merged, local, record, forget);
    } else {
      target[key] = structuredClone(value);
      record(merged, local);
    }
  }
}

/** Records a whole subtree as coming from one place (a rule list element). */
function recordTree(
  value: unknown,
  merged: KeySegment[],
  local: KeySegment[],
  record: RecordProvenance,
): void {
  record(merged, local);
  if (isTable(value)) {
    for (const [key, child] of Object.entries(value))
      recordTree(child, [...merged, key], [...local, key], record);
  }
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
