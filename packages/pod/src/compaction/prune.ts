import type { Item } from "@podkit/llm-worker";
import { bytesOfItem } from "../usage/token-estimator.js";

/** Prune knobs of `[compaction]`. */
export interface PruneConfig {
  /** The newest part of history, in estimated tokens, whose tool output is never dropped. */
  readonly protectedTokens: number;
  /** The least saving (estimated tokens) worth changing the request prefix for. */
  readonly minSavings: number;
}

/** What one request is sent with. */
export interface PrunePlan {
  /** Tool results before this history index are sent without `content`. */
  readonly upTo: number;
  /** The items to send (the history itself when nothing is pruned). */
  readonly items: readonly Item[];
  /** Estimated tokens the dropped content would have cost. */
  readonly savedTokens: number;
}

const contentTokens = (item: Item) =>
  item.type === "tool_result" && item.content !== undefined ? Buffer.byteLength(item.content) / 4 : 0;

/** The first index of the protected tail: the newest items holding at least `tokens` estimated tokens. */
export function protectedTailStart(items: readonly Item[], tokens: number): number {
  let total = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    total += bytesOfItem(items[i] as Item) / 4;
    if (total >= tokens) return i;
  }
  return 0;
}

/**
 * Request-local prune. Tool-result `content` before the boundary `upTo` is dropped from
 * the request copy; `summary` stays, and history is never touched. The boundary only moves forward,
 * and only when the content it would newly drop saves at least `minSavings`: each move changes the
 * request prefix from the first newly pruned item on (the provider re-bills it once), and between
 * moves every request sends the same prefix, so Anthropic cache breakpoints keep hitting. A boundary
 * that crept forward with the protected tail would change that prefix on every request instead.
 */
export function planPrune(items: readonly Item[], previousUpTo: number, config: PruneConfig): PrunePlan {
  let upTo = Math.min(previousUpTo, items.length);
  const candidate = protectedTailStart(items, config.protectedTokens);
  if (candidate > upTo) {
    let gain = 0;
    for (let i = upTo; i < candidate; i++) gain += contentTokens(items[i] as Item);
    if (gain >= config.minSavings) upTo = candidate;
  }
  return { upTo, ...prunedItems(items, upTo) };
}

/** The request copy of `items` with the tool-result content before `upTo` dropped, and what that saves. */
export function prunedItems(
  items: readonly Item[],
  upTo: number,
): { items: readonly Item[]; savedTokens: number } {
  if (upTo === 0) return { items, savedTokens: 0 };
  let savedTokens = 0;
  const pruned = items.map((item, index) => {
    if (index >= upTo || item.type !== "tool_result" || item.content === undefined) return item;
    savedTokens += contentTokens(item);
    const { content: _dropped, ...rest } = item;
    return rest;
  });
  return { items: pruned, savedTokens: Math.round(savedTokens) };
}
