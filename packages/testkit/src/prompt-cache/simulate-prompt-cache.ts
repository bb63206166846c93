import { OptionsError } from "../errors.js";
import type { CapturedRequest, Wire } from "../types.js";
import { createAnthropicCache } from "./anthropic-rule.js";
import { createAutomaticPrefixCache } from "./prefix-rule.js";
import { promptShape } from "./prompt-blocks.js";
import type { PromptCacheReport, PromptCacheRequestReport } from "./report.js";

/**
 * Estimates what the provider would bill as cache reads, cache writes and uncached input for the captured
 * requests, replayed in order against an initially empty cache. Tokens are UTF-8 bytes / 4 of a canonical
 * serialization (sorted keys, `cache_control` removed) of the prompt blocks. Anthropic follows its explicit
 * breakpoints; OpenAI and Gemini follow automatic longest-common-prefix caching (≥ 1024 tokens, 128-token
 * steps). The report has one entry per request, in order.
 */
export function simulatePromptCache(requests: readonly CapturedRequest[], wire: Wire): PromptCacheReport {
  const bill =
    wire === "anthropic"
      ? createAnthropicCache()
      : wire === "openai-chat" || wire === "openai-responses" || wire === "google"
        ? createAutomaticPrefixCache()
        : undefined;
  if (bill === undefined) throw new OptionsError(`simulatePromptCache: unknown wire ${JSON.stringify(wire)}`);
  if (!Array.isArray(requests)) {
    throw new OptionsError(
      "simulatePromptCache: pass the captured requests (double.requests) as the first argument",
    );
  }
  const reports = requests.map((request) => bill(promptShape(request, wire)));
  const totals: PromptCacheRequestReport = {
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    uncachedTokens: 0,
  };
  for (const report of reports) {
    totals.inputTokens += report.inputTokens;
    totals.cacheReadTokens += report.cacheReadTokens;
    totals.cacheWriteTokens += report.cacheWriteTokens;
    totals.uncachedTokens += report.uncachedTokens;
  }
  return {
    requests: reports,
    totals,
    cachedShare: totals.inputTokens === 0 ? 0 : totals.cacheReadTokens / totals.inputTokens,
  };
}
