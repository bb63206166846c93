import type { Item } from "@podkit/llm-worker";
import { bytesOfItem, bytesOfItems } from "../usage/token-estimator.js";

const callIdOf = (item: Item): string | undefined =>
  item.type === "tool_call" || item.type === "provider_tool_call" ? item.call_id : undefined;
const resultCallIdOf = (item: Item): string | undefined =>
  item.type === "tool_result" || item.type === "provider_tool_result" ? item.call_id : undefined;

/**
 * Where history is split for compaction: `items.slice(split)` is kept verbatim, the
 * part before it is summarised. The retained part gets the byte share `retainedTokens / estimatedTokens`
 * of the history's bytes (so the measured token count calibrates bytes); the split then moves back
 * until no retained tool result is separated from its call, and reasoning stays with what follows it.
 * 0 means there is nothing older to summarise.
 */
export function findSplitPoint(
  items: readonly Item[],
  retainedTokens: number,
  estimatedTokens: number,
): number {
  const share = Math.min(1, retainedTokens / Math.max(1, estimatedTokens));
  const target = bytesOfItems(items) * share;
  let split = items.length;
  let kept = 0;
  while (split > 0 && kept < target) {
    split -= 1;
    kept += bytesOfItem(items[split] as Item);
  }
  return keepCallsWithResults(items, split);
}

/** Moves `split` back until every tool result at or after it has its call at or after it too. */
export function keepCallsWithResults(items: readonly Item[], start: number): number {
  const callIndex = new Map<string, number>();
  items.forEach((item, index) => {
    const id = callIdOf(item);
    if (id !== undefined) callIndex.set(id, index);
  });
  let split = start;
  for (;;) {
    let moved = split;
    for (let i = split; i < items.length; i++) {
      const id = resultCallIdOf(items[i] as Item);
      const call = id === undefined ? undefined : callIndex.get(id);
      if (call !== undefined && call < moved) moved = call;
    }
    while (moved > 0 && items[moved - 1]?.type === "reasoning") moved -= 1;
    if (moved === split) return split;
    split = moved;
  }
}
