import { estimateTokens } from "./canonical.js";
import type { PromptShape } from "./prompt-blocks.js";
import type { PromptCacheRequestReport } from "./report.js";

/** Shortest common prefix that counts as a cache hit (OpenAI's documented 1024 tokens). */
export const AUTOMATIC_CACHE_MIN_TOKENS = 1024;
/** Cache hits grow in steps of this many tokens. */
export const AUTOMATIC_CACHE_STEP_TOKENS = 128;

/**
 * Automatic prefix caching (OpenAI Chat and Responses; Gemini implicit caching uses the same rule here).
 * The cached part of a request is the longest common prefix, in bytes of the canonical prompt, with any
 * earlier request in the same scope: floor(bytes / 4) tokens, zero below 1024, else rounded down to a
 * multiple of 128. Nothing is billed as a cache write.
 */
export function createAutomaticPrefixCache(): (prompt: PromptShape) => PromptCacheRequestReport {
  const seen = new Map<string, Buffer[]>();
  return (prompt) => {
    const bytes = Buffer.from(prompt.blocks.map((block) => block.text).join(""), "utf8");
    const inputTokens = estimateTokens(bytes.length);
    const earlier = seen.get(prompt.scope) ?? [];
    let longest = 0;
    for (const previous of earlier) longest = Math.max(longest, commonPrefixLength(bytes, previous));
    const commonTokens = Math.floor(longest / 4);
    const cacheReadTokens =
      commonTokens < AUTOMATIC_CACHE_MIN_TOKENS
        ? 0
        : commonTokens - (commonTokens % AUTOMATIC_CACHE_STEP_TOKENS);
    earlier.push(bytes);
    seen.set(prompt.scope, earlier);
    return {
      inputTokens,
      cacheReadTokens,
      cacheWriteTokens: 0,
      uncachedTokens: inputTokens - cacheReadTokens,
    };
  };
}

function commonPrefixLength(a: Buffer, b: Buffer): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a[i] === b[i]) i++;
  return i;
}
