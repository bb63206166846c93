import { byteLength, estimateTokens } from "./canonical.js";
import type { PromptShape } from "./prompt-blocks.js";
import type { PromptCacheRequestReport } from "./report.js";

/** How far back from a breakpoint Anthropic looks for an earlier cached prefix (its documented ~20 blocks). */
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;

/**
 * Anthropic's explicit caching. Every breakpoint writes the prefix up to and including its block. On a
 * later request, the longest prefix that ends at a breakpoint, or up to 20 blocks before one, and was
 * written earlier in the same scope is read; the rest up to the last breakpoint is written; what follows
 * the last breakpoint is uncached. Prefixes are compared whole, so a change in any block invalidates every
 * prefix that contains it. TTLs and minimum cacheable lengths are not modelled.
 */
export function createAnthropicCache(): (prompt: PromptShape) => PromptCacheRequestReport {
  const written = new Set<string>();
  return (prompt) => {
    const prefixKeys: string[] = [];
    const prefixTokens: number[] = [];
    let key = prompt.scope;
    let bytes = 0;
    for (const block of prompt.blocks) {
      key += `\u0000${block.text}`;
      bytes += byteLength(block.text);
      prefixKeys.push(key);
      prefixTokens.push(estimateTokens(bytes));
    }
    const inputTokens = estimateTokens(bytes);
    const breakpoints = prompt.blocks.flatMap((block, index) => (block.breakpoint ? [index] : []));
    const last = breakpoints.at(-1);
    if (last === undefined)
      return { inputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, uncachedTokens: inputTokens };

    let hit = -1;
    for (const breakpoint of breakpoints) {
      for (let index = breakpoint; index >= Math.max(0, breakpoint - ANTHROPIC_LOOKBACK_BLOCKS); index--) {
        if (index > hit && written.has(prefixKeys[index] as string)) hit = index;
      }
    }
    for (const breakpoint of breakpoints) written.add(prefixKeys[breakpoint] as string);

    const cacheReadTokens = hit >= 0 ? (prefixTokens[hit] as number) : 0;
    const cacheWriteTokens = (prefixTokens[last] as number) - cacheReadTokens;
    return {
      inputTokens,
      cacheReadTokens,
      cacheWriteTokens,
      uncachedTokens: inputTokens - cacheReadTokens - cacheWriteTokens,
    };
  };
}
