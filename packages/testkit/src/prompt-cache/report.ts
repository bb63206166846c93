/** What one request would be billed as, in estimated tokens. */
export interface PromptCacheRequestReport {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  uncachedTokens: number;
}

/** The billing estimate of a sequence of requests. */
export interface PromptCacheReport {
  requests: PromptCacheRequestReport[];
  totals: PromptCacheRequestReport;
  /** Cache-read tokens divided by input tokens over all requests (0 when there was no input). */
  cachedShare: number;
}
