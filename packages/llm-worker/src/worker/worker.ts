import type { LanguageModelV3 } from "@ai-sdk/provider";
import { v7 as uuidv7 } from "uuid";
import type { ModelAdapter } from "../adapters/model-adapter.js";
import { type NativeToolSearch, nativeToolSearchOf } from "../adapters/tool-search.js";
import {
  AbortedError,
  CancelledError,
  ConfigurationError,
  EmptyResponseError,
  HistoryAppendError,
  LlmWorkerError,
  ProviderError,
  WorkerBusyError,
} from "../errors.js";
import {
  type Item,
  type MessageItem,
  type ToolCallItem,
  textMessage,
  unansweredToolCalls,
} from "../items/item.js";
import { mediaCapabilities } from "../media/capabilities.js";
import type { MediaRef, ToolMedia } from "../media/media-ref.js";
import { defaultAttachmentText, type MediaStore, MemoryMediaStore } from "../media/media-store.js";
import { type MediaBytes, mediaDigestsOf } from "../media/request-media.js";
import { toProviderError } from "../retry/classify-error.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../retry/retry-policy.js";
import type { CollectedResponse } from "../stream/collect-response.js";
import { type StopReason, toStopReason } from "../stream/stop-reason.js";
import { ToolServer } from "../tools/tool-server.js";
import { buildCallOptions } from "./build-call-options.js";
import type { RunResult, RunStatus, WorkerEvent, WorkerEventListener } from "./events.js";
import { executeToolBatch } from "./execute-tool-batch.js";
import type { Interceptor } from "./interceptor.js";
import { containerOf, liveContainerId, type ProviderContainer } from "./provider-container.js";
import type { RequestConfig } from "./request-config.js";
import { requestWithRetry } from "./request-with-retry.js";
import { toUsageRecord, type UsageRecord } from "./usage.js";
import {
  type CachePolicy,
  DEFAULT_INTERRUPTED_TOOL_SUMMARY,
  type RunOptions,
  type WorkerOptions,
} from "./worker-options.js";

/**
 * The model loop. It owns the history, sends it one request at a time through the model
 * adapter, commits what comes back, runs tool batches, and returns when the model stops
 * calling tools (or an interceptor decides otherwise). It knows nothing about templates,
 * manifests, persistence or compaction; those reach it through `setSystemPrompt`,
 * `onHistoryAppend`, `onUsage` and the interceptor.
 */
export class Worker {
  readonly tools: ToolServer;
  /** Where tool results' media are stored and read back from (docs/media.md). */
  readonly media: MediaStore;
  private readonly adapter: ModelAdapter;
  private readonly policy: RetryPolicy;
  private readonly cache: CachePolicy;
  private readonly onHistoryAppend: WorkerOptions["onHistoryAppend"];
  private readonly onUsage: WorkerOptions["onUsage"];
  private readonly onResponseCommit: WorkerOptions["onResponseCommit"];
  private readonly listeners = new Set<WorkerEventListener>();
  private items: Item[];
  private prompt: string | undefined;
  private requestConfig: RequestConfig;
  private interceptor: Interceptor;
  private maxRequests: number;
  private interrupted: boolean;
  private running = false;
  private previousRequestLength: number | undefined;
  private container: ProviderContainer | undefined;
  private model: LanguageModelV3 | undefined;
  /** The bytes of the media the last request named (`null`: the store had none), reused by the next. */
  private mediaCache = new Map<string, Uint8Array | null>();

  constructor(options: WorkerOptions) {
    if (typeof options?.model?.load !== "function") {
      throw new ConfigurationError(
        'new Worker() needs a model adapter: pass { model: createModelAdapter("<provider>/<model id>") } or adapterFromModel(model)',
        { hint: "docs/llm-worker.md shows how a Worker is built" },
      );
    }
    this.adapter = options.model;
    this.prompt = options.systemPrompt;
    this.items = [...(options.history ?? [])];
    this.requestConfig = { ...options.config };
    this.tools = options.tools ?? new ToolServer();
    this.media = options.media ?? new MemoryMediaStore();
    this.interceptor = options.interceptor ?? {};
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.cache = { enabled: true, promptCacheKey: uuidv7(), ...options.cache };
    this.maxRequests = checkMaxRequests(options.maxRequests ?? 50);
    this.onHistoryAppend = options.onHistoryAppend;
    this.onUsage = options.onUsage;
    this.onResponseCommit = options.onResponseCommit;
    this.interrupted = options.interrupted ?? false;
    this.previousRequestLength = options.previousRequestLength;
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
    this.container = undefined;
  }

  /** The provider of the worker's model (`anthropic`, `openai`, `openai-chat`, `google`, …). */
  get provider(): string {
    return this.adapter.provider;
  }

  /**
   * The provider's own tool search the worker uses for deferred tools, or undefined where the wire
   * has none and they are reached through `find_tools`/`call_tool` (docs/tools-deferred.md).
   */
  get toolSearch(): NativeToolSearch | undefined {
    return nativeToolSearchOf(this.adapter);
  }

  /** The request settings (max tokens, sampling, reasoning). */
  get config(): Readonly<RequestConfig> {
    return this.requestConfig;
  }

  /** Replaces the request settings. Not allowed during a run (the next request would change mid-turn). */
  setConfig(config: RequestConfig): void {
    this.assertIdle("setConfig");
    this.requestConfig = { ...config };
  }

  setInterceptor(interceptor: Interceptor): void {
    this.assertIdle("setInterceptor");
    this.interceptor = interceptor;
  }

  /** Sets the per-run request limit (an integer ≥ 1). */
  setMaxRequests(maxRequests: number): void {
    this.maxRequests = checkMaxRequests(maxRequests);
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
    return this.withRunLifecycle("run", options, async (signal, maxRequests) => {
      await this.closeUnansweredToolCalls();
      await this.commit(typeof input === "string" ? textMessage("user", input) : input);
      return this.loop(signal, maxRequests);
    });
  }

  /**
   * Continues without new input: first executes tool calls that have no result (a paused
   * batch), then loops as `run()` does.
   */
  resume(options: RunOptions = {}): Promise<RunResult> {
    return this.withRunLifecycle("resume", options, async (signal, maxRequests) => {
      const open = unansweredToolCalls(this.items);
      if (open.length > 0) {
        const outcome = await this.runBatch(open, signal);
        if (outcome !== "done") return this.result(outcome, 0, undefined);
      }
      return this.loop(signal, maxRequests);
    });
  }

  /**
   * One run from start to end around `body`: refuses a second run at once, emits `run_start` and
   * `run_end`, flushes the tool server, and on failure marks the worker interrupted, turns an
   * abort into `AbortedError` and tells `onAbort`.
   */
  private async withRunLifecycle(
    mode: "run" | "resume",
    options: RunOptions,
    body: (signal: AbortSignal, maxRequests: number) => Promise<RunResult>,
  ): Promise<RunResult> {
    this.assertIdle(mode);
    this.running = true;
    const signal = options.signal ?? new AbortController().signal;
    this.lastText = "";
    this.emit({ type: "run_start", mode });
    try {
      if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
      await this.tools.flushPending();
      const result = await body(
        signal,
        options.maxRequests === undefined ? this.maxRequests : checkMaxRequests(options.maxRequests),
      );
      this.interrupted = result.status === "paused" || result.status === "awaiting_approval";
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

  private result(status: RunStatus, requests: number, stopReason: StopReason | undefined): RunResult {
    return { status, requests, text: this.lastText, stopReason };
  }

  private async loop(signal: AbortSignal, maxRequests: number): Promise<RunResult> {
    let requests = 0;
    let continuations = 0;
    let stopReason: StopReason | undefined;
    for (;;) {
      if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
      for (const item of (await this.interceptor.pendingHistoryAppends?.()) ?? []) await this.commit(item);
      let requestItems: Item[] = this.items.slice();
      let stablePrefixEnd: number | undefined;
      const decision = (await this.interceptor.preRequest?.({
        items: requestItems.slice(),
        systemPrompt: this.prompt,
        requests,
        signal,
      })) ?? { action: "continue" };
      if (decision.action === "yield") return this.result("yielded", requests, stopReason);
      if (decision.action === "cancel") throw new CancelledError(decision.reason);
      if (decision.action === "continue_with") {
        requestItems = decision.items;
        stablePrefixEnd = decision.stablePrefixEnd;
      }

      const historyLen = this.items.length;
      const response = await this.request(requestItems, signal, requests + 1, continuations, stablePrefixEnd);
      if (response.error !== undefined && response.toolCalls.length === 0) {
        // The stream broke after output began: keep what completed, ask again (never blindly).
        const error = toProviderError(response.error, this.adapter.provider, 1, response.lastPartType);
        if (error.kind === "malformed") throw error;
        if (continuations >= this.policy.maxContinuations) {
          throw new ProviderError(
            `${this.adapter.provider}: the response stream broke ${continuations + 1} times in one step; giving up (${error.message})`,
            { kind: "continuation", isRetryable: true, cause: error },
          );
        }
        continuations++;
        this.reportDropped(response, requests + 1);
        await this.commitResponse(response, false);
        this.emit({ type: "continuation", continuation: continuations, error });
        continue;
      }
      // A complete response, or a broken one whose finished tool calls are kept (partial ones dropped).
      continuations = 0;
      requests++;
      const continuesPause = stopReason?.kind === "pause";
      stopReason = toStopReason(response.finishReason, response.error !== undefined);
      const usage =
        response.usage !== undefined || response.error === undefined
          ? toUsageRecord(historyLen, response.usage)
          : undefined;
      // Reasoning alone is no answer: a model that spent its whole budget thinking answered nothing.
      const empty =
        response.toolCalls.length === 0 && response.items.every((item) => item.type === "reasoning");
      const unanswered = empty && (stopReason.kind === "length" || stopReason.kind === "error");
      // With `onResponseCommit` the usage and the items are persisted in one call (one write).
      const persisted = this.onResponseCommit !== undefined && !unanswered;
      if (persisted) await this.persistResponse(usage, responseItems(response));
      else if (usage !== undefined) await this.persistUsage(usage);
      if (usage !== undefined) this.emit({ type: "usage", usage });
      this.reportDropped(response, requests);
      if (unanswered) throw new EmptyResponseError(this.adapter.provider, stopReason);
      const committed = await this.commitResponse(response, continuesPause, persisted);
      this.emit({
        type: "request_end",
        request: requests,
        stopReason,
        responseModel: response.responseModel,
        responseId: response.responseId,
      });
      if (response.toolCalls.length === 0) {
        if (stopReason.kind === "pause") {
          // Anthropic paused a long server-tool turn: sending the conversation back as it is
          // lets the model continue where it stopped. Each continuation is a request.
          if (requests >= maxRequests) return this.result("limit_reached", requests, stopReason);
          continue;
        }
        if (stopReason.kind === "length" || stopReason.kind === "content-filter") {
          this.emit({ type: "answer_truncated", request: requests, stopReason, text: this.lastText });
          this.emit({
            type: "warning",
            message: `the answer is incomplete: the model stopped with ${stopReason.kind} (${stopReason.raw ?? "no provider value"})`,
          });
        }
        const end = (await this.interceptor.onTurnEnd?.({
          history: this.items,
          response: committed,
          requests,
          stopReason,
        })) ?? { action: "finish" };
        if (end.action === "finish") return this.result("finished", requests, stopReason);
        if (end.action === "pause") return this.result("paused", requests, stopReason);
        for (const item of end.items) await this.commit(item);
      } else {
        const batch = await this.runBatch(response.toolCalls, signal);
        if (batch !== "done") return this.result(batch, requests, stopReason);
        const after = (await this.interceptor.afterToolBatch?.({ requests })) ?? { action: "continue" };
        if (after.action === "finish") return this.result("finished", requests, stopReason);
        if (after.action === "cancel") throw new CancelledError(after.reason);
      }
      if (requests >= maxRequests) return this.result("limit_reached", requests, stopReason);
    }
  }

  /** Reports tool calls whose input began streaming but never completed: they were dropped. */
  private reportDropped(response: CollectedResponse, request: number): void {
    for (const call of response.partialToolCalls) {
      this.emit({ type: "tool_call_dropped", request, callId: call.id, name: call.name });
      this.emit({
        type: "warning",
        message: `the response ended inside a call of tool "${call.name}" (${call.id}); the incomplete call was dropped and did not run`,
      });
    }
  }

  private async request(
    items: readonly Item[],
    signal: AbortSignal,
    request: number,
    continuation: number,
    stablePrefixEnd: number | undefined,
  ): Promise<CollectedResponse> {
    this.model ??= await this.adapter.load();
    const media = await this.mediaBytes(items);
    const options = buildCallOptions({
      adapter: this.adapter,
      systemPrompt: this.prompt,
      items,
      tools: this.tools.definitions(),
      deferredTools: this.tools.deferredNames(),
      config: this.requestConfig,
      promptCacheKey: this.cache.promptCacheKey,
      cacheEnabled: this.cache.enabled,
      previousRequestLength: this.previousRequestLength,
      stablePrefixEnd,
      containerId: liveContainerId(this.container, this.policy.clock.now()),
      media,
    });
    const response = await requestWithRetry(
      {
        model: this.model,
        provider: this.adapter.provider,
        policy: this.policy,
        signal,
        emit: (event) => this.emit(event),
        request,
        continuation,
      },
      options,
    );
    this.previousRequestLength = items.length;
    this.container = containerOf(response.finishMetadata) ?? this.container;
    return response;
  }

  /**
   * Commits a response's items in stream order (reasoning, text, provider-executed calls and
   * results, compaction), then its client tool calls. `appendText` joins the text to the answer
   * of the previous response (the continuation of a paused turn).
   */
  private async commitResponse(
    response: CollectedResponse,
    appendText: boolean,
    persisted = false,
  ): Promise<Item[]> {
    const committed = responseItems(response);
    if (response.text !== "") this.lastText = appendText ? this.lastText + response.text : response.text;
    for (const item of committed) {
      if (persisted) this.adopt(item);
      else await this.commit(item);
    }
    return committed;
  }

  /** The usage of a response that commits nothing (it answered nothing): alone, through either hook. */
  private async persistUsage(usage: UsageRecord): Promise<void> {
    if (this.onResponseCommit === undefined) await this.onUsage?.(usage);
    else await this.onResponseCommit({ usage, items: [] });
  }

  /** `onResponseCommit` of a complete response; a failure is the first item's `HistoryAppendError`. */
  private async persistResponse(usage: UsageRecord | undefined, items: Item[]): Promise<void> {
    try {
      await this.onResponseCommit?.({ usage, items });
    } catch (cause) {
      throw items.length === 0 ? cause : new HistoryAppendError((items[0] as Item).type, cause);
    }
  }

  private async runBatch(
    calls: readonly Item[],
    signal: AbortSignal,
  ): Promise<"done" | "paused" | "awaiting_approval"> {
    const outcome = await executeToolBatch(
      calls.filter((item) => item.type === "tool_call"),
      {
        tools: this.tools,
        interceptor: this.interceptor,
        signal,
        emit: (event) => this.emit(event),
        storeMedia: (call, media) => this.storeMedia(call, media, signal),
      },
    );
    if (outcome === "paused" || outcome === "awaiting_approval") return outcome;
    if (signal.aborted) throw new AbortedError(undefined, { cause: signal.reason });
    // Results of tools that ran are kept even when postToolCall aborts: their effects happened.
    for (const result of outcome.results) await this.commit(result);
    await this.commitAttachment(outcome.results.flatMap((result) => result.media ?? []));
    if (outcome.cancelled) throw outcome.cancelled;
    return outcome.awaiting === true ? "awaiting_approval" : "done";
  }

  /**
   * Stores a result's media parts through the media store, fitted to this provider: references for
   * the result, notes for the parts refused. A part the store fails on is a note and a warning:
   * the tool ran, its result still goes to the model.
   */
  private async storeMedia(
    call: ToolCallItem,
    media: readonly ToolMedia[],
    signal: AbortSignal,
  ): Promise<{ refs: MediaRef[]; notes: string[] }> {
    const capabilities = mediaCapabilities(this.adapter);
    const refs: MediaRef[] = [];
    const notes: string[] = [];
    for (const part of media) {
      try {
        const stored = await this.media.put(part, {
          callId: call.call_id,
          toolName: call.name,
          capabilities,
          signal,
        });
        if (typeof stored === "string") notes.push(stored);
        else refs.push(stored);
      } catch (error) {
        if (signal.aborted) throw error;
        this.emit({
          type: "warning",
          message: `${call.name} (${call.call_id}): a ${part.mediaType} part could not be stored: ${(error as Error)?.message ?? error}`,
        });
        notes.push(`[${part.mediaType} not shown: it could not be stored]`);
      }
    }
    return { refs, notes };
  }

  /**
   * On a wire whose tool results take no media (`placement: "user_message"`), one message after a
   * batch's results carries their media (each digest once), committed like any item so a replay
   * sends the same request (docs/media.md). It is a `system` message (the runtime's, not the
   * person's), sent in the user role: the only one that carries images on every wire.
   */
  private async commitAttachment(media: readonly MediaRef[]): Promise<void> {
    if (media.length === 0 || mediaCapabilities(this.adapter).placement !== "user_message") return;
    const unique = [...new Map(media.map((ref) => [ref.digest, ref])).values()];
    const text = this.media.attachmentText?.(unique) ?? defaultAttachmentText(unique);
    await this.commit({ type: "message", role: "system", content: [{ type: "text", text }], media: unique });
  }

  /**
   * The bytes of the media `items` name, from the media store (kept from the last request for the
   * digests it named too). A part the store cannot give is `null`: the request carries a note in
   * its place, and a warning says so once.
   */
  private async mediaBytes(items: readonly Item[]): Promise<MediaBytes> {
    const found = new Map<string, Uint8Array | null>();
    for (const digest of mediaDigestsOf(items)) {
      let bytes = this.mediaCache.get(digest);
      if (bytes === undefined) {
        try {
          bytes = await this.media.get(digest);
        } catch (error) {
          bytes = null;
          this.emit({
            type: "warning",
            message: `the media part ${digest} of this conversation could not be read, so the model gets a note in its place: ${(error as Error)?.message ?? error}`,
          });
        }
      }
      found.set(digest, bytes);
    }
    this.mediaCache = found;
    return found;
  }

  private async commit(item: Item): Promise<void> {
    try {
      await this.onHistoryAppend?.(item);
    } catch (cause) {
      throw new HistoryAppendError(item.type, cause);
    }
    this.adopt(item);
  }

  /** An item already persisted enters history and is reported. */
  private adopt(item: Item): void {
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
    if (this.running) throw new WorkerBusyError(what);
  }
}

/** What a response commits, in order: its items in stream order, then its client tool calls. */
function responseItems(response: CollectedResponse): Item[] {
  return [...response.items, ...response.toolCalls];
}

function checkMaxRequests(value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigurationError(
      `maxRequests must be an integer ≥ 1 (got ${String(value)}): it is the number of model requests one run may make`,
      { hint: "a pod takes it from [worker] max_turns in the manifest" },
    );
  }
  return value;
}
