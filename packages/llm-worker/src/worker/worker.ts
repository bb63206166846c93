import type { LanguageModelV3 } from "@ai-sdk/provider";
import { v7 as uuidv7 } from "uuid";
import type { ModelAdapter } from "../adapters/model-adapter.js";
import {
  AbortedError,
  CancelledError,
  HistoryAppendError,
  LlmWorkerError,
  ProviderError,
} from "../errors.js";
import { type Item, type MessageItem, messageText, textMessage, unansweredToolCalls } from "../items/item.js";
import { toProviderError } from "../retry/classify-error.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../retry/retry-policy.js";
import type { CollectedResponse } from "../stream/collect-response.js";
import { ToolServer } from "../tools/tool-server.js";
import { buildCallOptions } from "./build-call-options.js";
import type { RunResult, RunStatus, WorkerEvent, WorkerEventListener } from "./events.js";
import { executeToolBatch } from "./execute-tool-batch.js";
import type { Interceptor } from "./interceptor.js";
import type { RequestConfig } from "./request-config.js";
import { requestWithRetry } from "./request-with-retry.js";
import { toUsageRecord, type UsageRecord } from "./usage.js";

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
  interceptor?: Interceptor;
  retry?: Partial<RetryPolicy>;
  cache?: Partial<CachePolicy>;
  /** Model requests per run before the run ends with `limit_reached` (default 50). */
  maxTurns?: number;
  /**
   * The single persistence hook: awaited before an item enters history. A rejection stops
   * the turn with `HistoryAppendError`, and the item is not used (a tool call that could not
   * be persisted never runs).
   */
  onHistoryAppend?: (item: Item) => void | Promise<void>;
  /** Awaited once per model call with its token usage (the pod persists `llm_usage`). */
  onUsage?: (usage: UsageRecord) => void | Promise<void>;
  /** Restored interrupted flag. */
  interrupted?: boolean;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Overrides the worker's `maxTurns` for this run. */
  maxTurns?: number;
}

/**
 * The model loop. It owns the history, sends it one request at a time through the model
 * adapter, commits what comes back, runs tool batches, and returns when the model stops
 * calling tools (or an interceptor decides otherwise). It knows nothing about templates,
 * manifests, persistence or compaction; those reach it through `setSystemPrompt`,
 * `onHistoryAppend`, `onUsage` and the interceptor.
 */
export class Worker {
  readonly tools: ToolServer;
  private readonly adapter: ModelAdapter;
  private readonly policy: RetryPolicy;
  private readonly cache: CachePolicy;
  private readonly onHistoryAppend: WorkerOptions["onHistoryAppend"];
  private readonly onUsage: WorkerOptions["onUsage"];
  private readonly listeners = new Set<WorkerEventListener>();
  private items: Item[];
  private prompt: string | undefined;
  private requestConfig: RequestConfig;
  private interceptor: Interceptor;
  private maxTurns: number;
  private interrupted: boolean;
  private running = false;
  private previousRequestLength: number | undefined;
  private model: LanguageModelV3 | undefined;

  constructor(options: WorkerOptions) {
    this.adapter = options.model;
    this.prompt = options.systemPrompt;
    this.items = [...(options.history ?? [])];
    this.requestConfig = { ...options.config };
    this.tools = options.tools ?? new ToolServer();
    this.interceptor = options.interceptor ?? {};
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.cache = { enabled: true, promptCacheKey: uuidv7(), ...options.cache };
    this.maxTurns = options.maxTurns ?? 50;
    this.onHistoryAppend = options.onHistoryAppend;
    this.onUsage = options.onUsage;
    this.interrupted = options.interrupted ?? false;
    if (!Number.isInteger(this.maxTurns) || this.maxTurns < 1) {
      throw new LlmWorkerError(`maxTurns must be an integer ≥ 1 (got ${options.maxTurns})`);
    }
  }

  /** The system prompt string sent first on every request (undefined until set). */
  get systemPrompt(): string | undefined {
    return this.prompt;
  }

  /** Sets the system prompt verbatim; the worker never renders or changes it. */
  setSystemPrompt(prompt: string): void {
    this.prompt = prompt;
  }

  /** The committed history (read-only view). */
  get history(): readonly Item[] {
    return this.items;
  }

  /**
   * Replaces the history without calling `onHistoryAppend` (restore, or a compacted
   * segment the caller has already persisted). Not allowed during a run.
   */
  setHistory(items: readonly Item[]): void {
    this.assertIdle("setHistory");
    this.items = [...items];
    this.previousRequestLength = undefined;
  }

  /** The request settings (max tokens, sampling, reasoning). */
  get config(): Readonly<RequestConfig> {
    return this.requestConfig;
  }

  setConfig(config: RequestConfig): void {
    this.requestConfig = { ...config };
  }

  setInterceptor(interceptor: Interceptor): void {
    this.assertIdle("setInterceptor");
    this.interceptor = interceptor;
  }

  setMaxTurns(maxTurns: number): void {
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new LlmWorkerError(`maxTurns must be an integer ≥ 1 (got ${maxTurns})`);
    }
    this.maxTurns = maxTurns;
  }

  /** Sets the OpenAI prompt cache key (the pod uses the session id). */
  setPromptCacheKey(key: string): void {
    this.cache.promptCacheKey = key;
  }

  /** True when the last run was aborted, cancelled, paused or failed before finishing its turn. */
  get lastRunInterrupted(): boolean {
    return this.interrupted;
  }

  /** Restores the interrupted flag (e.g. from a session log). */
  setInterrupted(interrupted: boolean): void {
    this.interrupted = interrupted;
  }

  /** True while `run()` or `resume()` is in progress. */
  get isRunning(): boolean {
    return this.running;
  }

  /** Adds an event listener; returns a function that removes it. */
  subscribe(listener: WorkerEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Commits items through `onHistoryAppend`, in order (e.g. the pod's interrupt note). */
  async append(items: readonly Item[]): Promise<void> {
    this.assertIdle("append");
    for (const item of items) await this.commit(item);
  }

  /**
   * Gives every tool call without a result a synthetic error result carrying `summary`,
   * committed through `onHistoryAppend`. The worker does this itself (with a default
   * summary) before a new run, so the model never sees an unpaired call.
   */
  async closeUnansweredToolCalls(summary: string = DEFAULT_INTERRUPTED_TOOL_SUMMARY): Promise<number> {
    const open = unansweredToolCalls(this.items);
    for (const call of open) {
      await this.commit({ type: "tool_result", call_id: call.call_id, summary, is_error: true });
    }
    return open.length;
  }

  /**
   * Appends a user message and loops until the model stops calling tools. Resolves with
   * `finished`, `paused`, `limit_reached` or `yielded`; rejects with `AbortedError`,
   * `CancelledError`, `ProviderError` or `HistoryAppendError`.
   */
  run(input: string | MessageItem, options: RunOptions = {}): Promise<RunResult> {
    return this.guard("run", options, async (signal, maxTurns) => {
      await this.closeUnansweredToolCalls();
      await this.commit(typeof input === "string" ? textMessage("user", input) : input);
      return this.loop(signal, maxTurns);
    });
  }

  /**
   * Continues without new input: first executes tool calls that have no result (a paused
   * batch), then loops as `run()` does.
   */
  resume(options: RunOptions = {}): Promise<RunResult> {
    return this.guard("resume", options, async (signal, maxTurns) => {
      const open = unansweredToolCalls(this.items);
      if (open.length > 0) {
        const outcome = await this.runBatch(open, signal);
        if (outcome === "paused") return this.result("paused", 0);
      }
      return this.loop(signal, maxTurns);
    });
  }

  private async guard(
    mode: "run" | "resume",
    options: RunOptions,
    body: (signal: AbortSignal, maxTurns: number) => Promise<RunResult>,
  ): Promise<RunResult> {
    this.assertIdle(mode);
    this.running = true;
    const signal = options.signal ?? new AbortController().signal;
    this.lastText = "";
    this.emit({ type: "run_start", mode });
    try {
      if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
      await this.tools.flushPending();
      const result = await body(signal, options.maxTurns ?? this.maxTurns);
      this.interrupted = result.status === "paused";
      this.emit({ type: "run_end", result });
      return result;
    } catch (caught) {
      const error =
        signal.aborted && !LlmWorkerError.isInstance(caught)
          ? new AbortedError(undefined, { cause: caught })
          : (caught as Error);
      this.interrupted = true;
      try {
        await this.interceptor.onAbort?.({ error, history: this.items });
      } catch (hookError) {
        // The run's own error is what the caller must see; a failing onAbort is only reported.
        this.emit({
          type: "warning",
          message: `onAbort failed: ${(hookError as Error)?.message ?? hookError}`,
        });
      }
      this.emit({ type: "run_end", result: undefined, error });
      throw error;
    } finally {
      this.running = false;
    }
  }

  private lastText = "";

  private result(status: RunStatus, turns: number): RunResult {
    return { status, turns, text: this.lastText };
  }

  private async loop(signal: AbortSignal, maxTurns: number): Promise<RunResult> {
    let turns = 0;
    let continuations = 0;
    for (;;) {
      if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
      for (const item of (await this.interceptor.pendingHistoryAppends?.()) ?? []) await this.commit(item);
      let requestItems: Item[] = this.items.slice();
      const decision = (await this.interceptor.preRequest?.({
        items: requestItems.slice(),
        systemPrompt: this.prompt,
        turn: turns,
        signal,
      })) ?? { action: "continue" };
      if (decision.action === "yield") return this.result("yielded", turns);
      if (decision.action === "cancel") throw new CancelledError(decision.reason);
      if (decision.action === "continue_with") requestItems = decision.items;

      const historyLen = this.items.length;
      const response = await this.request(requestItems, signal, turns, continuations);
      if (response.error !== undefined && response.toolCalls.length === 0) {
        // The stream broke after output began: keep what completed, ask again (never blindly).
        const error = toProviderError(response.error, this.adapter.provider);
        if (error.kind === "malformed") throw error;
        if (continuations >= this.policy.maxContinuations) {
          throw new ProviderError(
            `${this.adapter.provider}: the response stream broke ${continuations + 1} times in one step; giving up (${error.message})`,
            { kind: "continuation", isRetryable: true, cause: error },
          );
        }
        continuations++;
        await this.commitResponse(response);
        this.emit({ type: "continuation", continuation: continuations, error });
        continue;
      }
      // A complete response, or a broken one whose finished tool calls are kept (partial ones dropped).
      continuations = 0;
      turns++;
      if (response.usage !== undefined || response.error === undefined) {
        const usage = toUsageRecord(historyLen, response.usage);
        await this.onUsage?.(usage);
        this.emit({ type: "usage", usage });
      }
      const committed = await this.commitResponse(response);
      this.emit({ type: "turn_end", turn: turns });
      if (response.toolCalls.length === 0) {
        const end = (await this.interceptor.onTurnEnd?.({
          history: this.items,
          response: committed,
          turn: turns,
        })) ?? {
          action: "finish",
        };
        if (end.action === "finish") return this.result("finished", turns);
        if (end.action === "pause") return this.result("paused", turns);
        for (const item of end.items) await this.commit(item);
      } else if ((await this.runBatch(response.toolCalls, signal)) === "paused") {
        return this.result("paused", turns);
      }
      if (turns >= maxTurns) return this.result("limit_reached", turns);
    }
  }

  private async request(
    items: readonly Item[],
    signal: AbortSignal,
    turn: number,
    continuation: number,
  ): Promise<CollectedResponse> {
    this.model ??= await this.adapter.load();
    const options = buildCallOptions({
      adapter: this.adapter,
      systemPrompt: this.prompt,
      items,
      tools: this.tools.definitions(),
      config: this.requestConfig,
      promptCacheKey: this.cache.promptCacheKey,
      cacheEnabled: this.cache.enabled,
      previousRequestLength: this.previousRequestLength,
    });
    const response = await requestWithRetry(
      {
        model: this.model,
        provider: this.adapter.provider,
        policy: this.policy,
        signal,
        emit: (event) => this.emit(event),
        turn,
        continuation,
      },
      options,
    );
    this.previousRequestLength = items.length;
    return response;
  }

  /** Commits a response's reasoning, then its text, then its tool calls. */
  private async commitResponse(response: CollectedResponse): Promise<Item[]> {
    const committed: Item[] = [...response.reasoning];
    if (response.text.length > 0) {
      const message: MessageItem = { type: "message", role: "assistant", content: response.text };
      committed.push(message);
      this.lastText = messageText(message);
    }
    committed.push(...response.toolCalls);
    for (const item of committed) await this.commit(item);
    return committed;
  }

  private async runBatch(calls: readonly Item[], signal: AbortSignal): Promise<"done" | "paused"> {
    const results = await executeToolBatch(
      calls.filter((item) => item.type === "tool_call"),
      { tools: this.tools, interceptor: this.interceptor, signal, emit: (event) => this.emit(event) },
    );
    if (results === "paused") return "paused";
    if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    for (const result of results) await this.commit(result);
    return "done";
  }

  private async commit(item: Item): Promise<void> {
    try {
      await this.onHistoryAppend?.(item);
    } catch (cause) {
      throw new HistoryAppendError(item.type, cause);
    }
    this.items.push(item);
    this.emit({ type: "item_committed", item });
  }

  private emit(event: WorkerEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A display listener must not break the loop.
      }
    }
  }

  private assertIdle(what: string): void {
    if (this.running) throw new LlmWorkerError(`${what}() is not allowed while a run is in progress`);
  }
}
