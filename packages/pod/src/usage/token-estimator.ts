import type { Item, UsageRecord } from "@podkit/llm-worker";
import { mediaTokensOf } from "../media/media-refs.js";

/** How an estimate was made, from the most to the least exact. */
export type EstimateMethod = "measured" | "interpolated" | "extrapolated" | "bytes";

export interface TokenEstimate {
  readonly tokens: number;
  readonly method: EstimateMethod;
}

const itemBytes = new WeakMap<Item, number>();

/**
 * UTF-8 bytes of an item's JSON, plus four per estimated token of the media it names (a digest
 * is a few bytes of JSON; the image it stands for is hundreds of tokens: docs/media.md). Cached per
 * item object: history items never change.
 */
export function bytesOfItem(item: Item): number {
  let bytes = itemBytes.get(item);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(item)) + 4 * mediaTokensOf(item);
    itemBytes.set(item, bytes);
  }
  return bytes;
}

/** UTF-8 bytes of a sequence of items. */
export function bytesOfItems(items: readonly Item[]): number {
  let total = 0;
  for (const item of items) total += bytesOfItem(item);
  return total;
}

/**
 * The token estimator for a request built from `items.slice(0, at)` after the system
 * prompt. A usage record of exactly that history length is the measurement; between two records
 * the tokens are interpolated by serialized bytes; after the last record it is that record plus
 * Δbytes/4; with no record, bytes/4. Records reporting no input (a provider that sent no usage)
 * are not measurements and are ignored.
 */
export function estimateTokens(input: {
  systemPrompt: string | undefined;
  items: readonly Item[];
  usage: readonly UsageRecord[];
  at?: number;
}): TokenEstimate {
  const { items } = input;
  const at = Math.min(input.at ?? items.length, items.length);
  const systemBytes = Buffer.byteLength(input.systemPrompt ?? "");
  const cumulative: number[] = [systemBytes];
  for (let i = 0; i < items.length; i++)
    cumulative.push((cumulative[i] as number) + bytesOfItem(items[i] as Item));
  const bytesAt = (length: number) => cumulative[Math.min(Math.max(length, 0), items.length)] as number;

  let before: UsageRecord | undefined;
  let after: UsageRecord | undefined;
  for (const record of input.usage) {
    if (record.inputTokens <= 0 || record.historyLen > items.length) continue;
    if (record.historyLen === at) return { tokens: record.inputTokens, method: "measured" };
    if (record.historyLen < at && (before === undefined || record.historyLen >= before.historyLen))
      before = record;
    if (record.historyLen > at && (after === undefined || record.historyLen < after.historyLen))
      after = record;
  }
  const bytes = bytesAt(at);
  if (before !== undefined && after !== undefined) {
    const span = bytesAt(after.historyLen) - bytesAt(before.historyLen);
    const share = span <= 0 ? 0 : (bytes - bytesAt(before.historyLen)) / span;
    const tokens = before.inputTokens + (after.inputTokens - before.inputTokens) * share;
    return { tokens: Math.round(tokens), method: "interpolated" };
  }
  if (after !== undefined) {
    // Only a later record: scale it down by bytes (interpolating from an empty prompt).
    const share = bytesAt(after.historyLen) === 0 ? 0 : bytes / bytesAt(after.historyLen);
    return { tokens: Math.round(after.inputTokens * share), method: "interpolated" };
  }
  if (before !== undefined) {
    const delta = bytes - bytesAt(before.historyLen);
    return { tokens: Math.round(before.inputTokens + delta / 4), method: "extrapolated" };
  }
  return { tokens: Math.ceil(bytes / 4), method: "bytes" };
}
