import type { LanguageModelV3Usage } from "@ai-sdk/provider";

/**
 * Token usage of one model request. `inputTokens` is the full prompt including cache reads and
 * writes; `historyLen` is the number of history items the request was built from. The session
 * log stores it as its `llm_usage` entry (snake_case on disk).
 */
export interface UsageRecord {
  historyLen: number;
  /** The full prompt, including cache reads and writes. */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens?: number;
}

/** Converts the provider's usage into a record; missing totals are rebuilt from their parts. */
export function toUsageRecord(historyLen: number, usage: LanguageModelV3Usage | undefined): UsageRecord {
  const cacheRead = usage?.inputTokens.cacheRead ?? 0;
  const cacheWrite = usage?.inputTokens.cacheWrite ?? 0;
  const input = usage?.inputTokens.total ?? (usage?.inputTokens.noCache ?? 0) + cacheRead + cacheWrite;
  const record: UsageRecord = {
    historyLen,
    inputTokens: input,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: usage?.outputTokens.total ?? 0,
  };
  if (usage?.outputTokens.reasoning !== undefined) record.reasoningTokens = usage.outputTokens.reasoning;
  return record;
}
