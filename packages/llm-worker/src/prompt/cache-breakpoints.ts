import type { Item } from "../items/item.js";
import type { CacheBreakpoints } from "./to-v3-prompt.js";

/** At most this many breakpoints per request (Anthropic's limit). */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The nearest index at or before `index` whose item can carry cache control (not reasoning). */
function cacheableAtOrBefore(items: readonly Item[], index: number): number | undefined {
  for (let i = Math.min(index, items.length - 1); i >= 0; i--) {
    if (items[i]?.type !== "reasoning") return i;
  }
  return undefined;
}

/**
 * Anthropic prompt-cache breakpoints: the end of the system prompt, the end of a prefix the caller
 * knows earlier requests sent unchanged (`stableLastIndex`: a request-local rewrite such as a prune
 * step changed what follows it, and without a breakpoint there the provider would find nothing
 * cached after the system prompt), the last item of the previous request (so this request reads
 * what that one wrote), and the newest item (so the next request can read this one). Never more
 * than four; the newest ones win.
 */
export function planCacheBreakpoints(
  items: readonly Item[],
  hasSystemPrompt: boolean,
  previousLastIndex: number | undefined,
  stableLastIndex?: number,
): CacheBreakpoints {
  const picked = new Set<number>();
  if (stableLastIndex !== undefined && stableLastIndex >= 0) {
    const stable = cacheableAtOrBefore(items, stableLastIndex);
    if (stable !== undefined) picked.add(stable);
  }
  const newest = cacheableAtOrBefore(items, items.length - 1);
  if (previousLastIndex !== undefined) {
    const previous = cacheableAtOrBefore(items, previousLastIndex);
    if (previous !== undefined) picked.add(previous);
  }
  if (newest !== undefined) picked.add(newest);
  const limit = MAX_CACHE_BREAKPOINTS - (hasSystemPrompt ? 1 : 0);
  return { systemPrompt: hasSystemPrompt, items: new Set([...picked].slice(-limit)) };
}
