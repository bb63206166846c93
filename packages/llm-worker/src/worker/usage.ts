import type { LanguageModelV3Usage } from "@ai-sdk/provider";

/**
 * Token usage of one model call. `input_tokens` is the full prompt including cache reads and
 * writes; `history_len` is the number of history items the request was built from.
 */
export interface UsageRecord {
  history_len: number;
  input_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens?: number;
}

/** Converts the provider's usage into a record; missing totals are rebuilt from their parts. */
export function toUsageRecord(historyLen: number, usage: LanguageModelV3Usage | undefined): UsageRecord {
  const cacheRead = usage?.inputTokens.cacheRead ?? 0;
  const cacheWrite = usage?.inputTokens.cacheWrite ?? 0;
  const input = usage?.inputTokens.total ?? (usage?.inputTokens.noCache ?? 0) + cacheRead + cacheWrite;
  const record: UsageRecord = {
    history_len: historyLen,
    input_tokens: input,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    output_tokens: usage?.outputTokens.total ?? 0,
  };
  if (usage?.outputTokens.reasoning !== undefined) record.reasoning_tokens = usage.outputTokens.reasoning;
  return record;
}
