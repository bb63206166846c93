import {
  type Item,
  type MediaStore,
  type ModelAdapter,
  type RequestConfig,
  type Tool,
  ToolServer,
  Worker,
  type WorkerEvent,
} from "@podkit/llm-worker";
import type { CompactionConfig } from "@podkit/manifest";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { CompactCollection } from "./compact-tools.js";
import { CompactSummaryMissingError, CompactSummaryOversizeError } from "./errors.js";

/** One tool as a request declares it (name, description, JSON schema). */
type ToolDeclaration = ReturnType<ToolServer["definitions"]>[number];

/** The conversation a compaction continues: what the pod's last request was built from. */
export interface PodConversation {
  readonly systemPrompt: string | undefined;
  /** The history as the pod sends it (its prune boundary applied), so the bytes are the pod's. */
  readonly items: readonly Item[];
  /** The pod's tool list, in the order and bytes it sends it. */
  readonly tools: readonly ToolDeclaration[];
  readonly requestConfig: RequestConfig;
  /** The pod's prompt cache key (the session id). */
  readonly promptCacheKey: string | undefined;
  /** Item count of the pod's last request in this segment: its cache breakpoint is read. */
  readonly previousRequestLength: number | undefined;
  /** The pod's media store: the conversation's images, read back as the pod's requests send them. */
  readonly media?: MediaStore;
}

export interface CompactWorkerInput {
  readonly model: ModelAdapter;
  readonly catalog: PromptCatalog;
  readonly config: CompactionConfig;
  readonly conversation: PodConversation;
  /** The compaction instruction (`compact_system`), appended as the newest user turn. */
  readonly instruction: string;
  /** The compaction's own tools, working. */
  readonly tools: readonly Tool[];
  /** The builtin `read_file` on the pod's scope: answers the pod's `read_file` during compaction. */
  readonly readFile: Tool;
  readonly collected: CompactCollection;
  readonly signal: AbortSignal;
  /** Receives the worker's events (telemetry: its requests as `chat` spans). */
  readonly onWorkerEvent?: (event: WorkerEvent) => void;
}

const summaryTokens = (summary: string) => Math.ceil(Buffer.byteLength(summary) / 4);

/**
 * The tool server of a compaction: the pod's list declared exactly as the pod declares it (the
 * same names, descriptions and schemas, so the request's tools are the pod's bytes), answered
 * differently — the compaction's own tools work, the pod's `read_file` reads through the builtin on
 * the pod's scope, every other pod tool is refused (`compact_pod_tool_refused`) without running.
 * A compaction tool the pod's list lacks (a `pod.compact()` without `[compaction]`) is added.
 */
function compactionToolServer(input: CompactWorkerInput): ToolServer {
  const own = new Map(input.tools.map((tool) => [tool.name, tool]));
  const server = new ToolServer();
  for (const declared of input.conversation.tools) {
    const working = declared.name === "read_file" ? input.readFile : own.get(declared.name);
    own.delete(declared.name);
    server.registerTool({
      name: declared.name,
      description: declared.description ?? "",
      inputSchema: declared.inputSchema,
      execute: (args, context) =>
        working === undefined
          ? {
              summary: input.catalog.render("compact_pod_tool_refused", { tool: declared.name }),
              is_error: true,
            }
          : working.execute(args, context),
    });
  }
  for (const tool of own.values()) server.registerTool(tool);
  return server;
}

/**
 * One compaction as a continuation of the pod's own conversation: a disposable `Worker` with the
 * pod's system prompt, tool list and history (its request bytes), the compaction instruction
 * appended as the newest user turn, so the provider reads the conversation's cached prefix.
 * Nothing is persisted. No summary → one nudge (`compact_nudge_missing_summary`), then
 * `CompactSummaryMissingError`; a summary over `summary_max_tokens` → one rewrite request, then
 * `CompactSummaryOversizeError`. Resolves with the summary (the last `write_summary` call).
 */
export async function runCompactWorker(input: CompactWorkerInput): Promise<string> {
  const { catalog, config, collected, signal, conversation } = input;
  const worker = new Worker({
    model: input.model,
    tools: compactionToolServer(input),
    config: conversation.requestConfig,
    maxRequests: config.worker_max_turns,
    history: conversation.items,
    ...(conversation.media === undefined ? {} : { media: conversation.media }),
    ...(conversation.systemPrompt === undefined ? {} : { systemPrompt: conversation.systemPrompt }),
    ...(conversation.promptCacheKey === undefined
      ? {}
      : { cache: { promptCacheKey: conversation.promptCacheKey } }),
    ...(conversation.previousRequestLength === undefined
      ? {}
      : { previousRequestLength: conversation.previousRequestLength }),
  });
  if (input.onWorkerEvent !== undefined) worker.subscribe(input.onWorkerEvent);
  let requests = (await worker.run(input.instruction, { signal })).requests;
  if (collected.summary === undefined) {
    requests += (await worker.run(catalog.render("compact_nudge_missing_summary"), { signal })).requests;
    if (collected.summary === undefined) throw new CompactSummaryMissingError(requests);
  }
  const first = summaryTokens(collected.summary);
  if (first > config.summary_max_tokens) {
    const rewrite = catalog.render("compact_rewrite_oversize_summary", {
      summary_tokens: first,
      summary_max_tokens: config.summary_max_tokens,
    });
    await worker.run(rewrite, { signal });
    const second = summaryTokens(collected.summary);
    if (second > config.summary_max_tokens)
      throw new CompactSummaryOversizeError(second, config.summary_max_tokens);
  }
  return collected.summary;
}
