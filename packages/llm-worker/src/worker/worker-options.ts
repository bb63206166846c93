import type { ModelAdapter } from "../adapters/model-adapter.js";
import type { Item } from "../items/item.js";
import type { MediaStore } from "../media/media-store.js";
import type { RetryPolicy } from "../retry/retry-policy.js";
import type { ToolServer } from "../tools/tool-server.js";
import type { Interceptor } from "./interceptor.js";
import type { RequestConfig } from "./request-config.js";
import type { UsageRecord } from "./usage.js";

/** The summary the worker gives a tool call left unanswered by an interrupted run. */
export const DEFAULT_INTERRUPTED_TOOL_SUMMARY =
  "This tool call was interrupted before it produced a result; it did not run to completion.";

/** Caching behaviour of a worker. */
export interface CachePolicy {
  /** Send cache hints (Anthropic breakpoints, OpenAI cache key). Default true. */
  enabled: boolean;
  /** OpenAI `prompt_cache_key`; the pod sets the session id. Default: a fresh UUIDv7 per worker. */
  promptCacheKey: string;
}

export interface WorkerOptions {
  model: ModelAdapter;
  systemPrompt?: string;
  /** Initial history (a restored or compacted session); not passed through `onHistoryAppend`. */
  history?: readonly Item[];
  config?: RequestConfig;
  tools?: ToolServer;
  /**
   * Where tool results' images and documents are stored before their results are committed, and
   * read back for each request (docs/media.md). Default: a `MemoryMediaStore` (this worker's
   * lifetime only); a host that persists history passes a store that persists the bytes.
   */
  media?: MediaStore;
  interceptor?: Interceptor;
  retry?: Partial<RetryPolicy>;
  cache?: Partial<CachePolicy>;
  /**
   * Model requests per run before the run ends with `limit_reached` (default 50). Every request
   * counts, including the continuations of an Anthropic `pause_turn`.
   */
  maxRequests?: number;
  /**
   * The single persistence hook: awaited before an item enters history. A rejection stops
   * the turn with `HistoryAppendError`, and the item is not used (a tool call that could not
   * be persisted never runs).
   */
  onHistoryAppend?: (item: Item) => void | Promise<void>;
  /** Awaited once per model call with its token usage (the pod persists `llm_usage`). */
  onUsage?: (usage: UsageRecord) => void | Promise<void>;
  /**
   * Persists one model response at once: its usage (undefined when it reported none) and the
   * items it commits, in order. When given, the worker calls it instead of `onUsage` and one
   * `onHistoryAppend` per item of a complete response, so a host can make them one durable write;
   * the usage is reported and the items enter history only after it resolves. A rejection stops
   * the turn with `HistoryAppendError` (nothing of the response is used).
   */
  onResponseCommit?: (response: ResponseCommit) => void | Promise<void>;
  /** Restored interrupted flag. */
  interrupted?: boolean;
  /**
   * A restored worker's item count of the last request before the restore (the `history_len` of
   * its usage record). The next request then puts its "previous request" cache breakpoint where
   * the worker that made that request would have: the request bytes do not change across a restore
   * and the provider's cache is read. Unset: no such breakpoint on the first request.
   */
  previousRequestLength?: number;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Overrides the worker's `maxRequests` for this run. */
  maxRequests?: number;
}

/** One complete model response as `onResponseCommit` persists it. */
export interface ResponseCommit {
  readonly usage: UsageRecord | undefined;
  readonly items: readonly Item[];
}
