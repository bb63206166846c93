import { type Item, ToolServer, Worker } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import { loadToolPackages, type ToolSet } from "@podkit/tools";
import { loadPodResources, type PodResources } from "../resources/index.js";
import { readAgentsMd } from "../system-prompt/agents-md.js";
import { buildSystemPromptContext } from "../system-prompt/system-prompt-context.js";
import type { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { processWarningSink, type WarningSink } from "../warnings.js";
import { podModelAdapter } from "./model.js";
import type { PodOptions } from "./pod-options.js";
import type { SessionRecorder } from "./session-recorder.js";
import { openSessionStore } from "./store-selection.js";

/** What `fromManifest` and `restore` build alike, before any run. */
export interface PodParts {
  readonly loaded: LoadedManifest;
  readonly resources: PodResources;
  readonly toolSet: ToolSet;
  readonly toolServer: ToolServer;
  readonly store: Store<Item>;
  readonly warn: WarningSink;
  /** Where a tool package's warnings also go while a run is in progress (its event stream). */
  readonly toolWarnings: { relay?: (message: string) => void };
}

export async function loadResources(loaded: LoadedManifest, options: PodOptions): Promise<PodResources> {
  // The one entry point: all four catalog layers on every path (construction and restore).
  return loadPodResources(loaded, {
    onWarning: options.onWarning ?? processWarningSink,
    ...(options.renderLimits === undefined ? {} : { renderLimits: options.renderLimits }),
  });
}

export async function loadParts(
  loaded: LoadedManifest,
  resources: PodResources,
  options: PodOptions,
): Promise<PodParts> {
  const warn = options.onWarning ?? processWarningSink;
  const toolWarnings: PodParts["toolWarnings"] = {};
  // The store first: a missing database URL fails before any tool package (or MCP server) starts.
  const ownStore = options.store === undefined;
  const store = (options.store ??
    (await openSessionStore(loaded, { env: options.env ?? process.env }))) as Store<Item>;
  const toolSet = await loadToolPackages(loaded, {
    env: options.env ?? process.env,
    warn: (w) => {
      const message = `${w.source}: ${w.message}`;
      warn({ code: "pod.tools", message });
      toolWarnings.relay?.(message);
    },
    ...(options.toolPackages === undefined ? {} : { extraPackages: options.toolPackages }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }).catch(async (error: unknown) => {
    if (ownStore) await store.close();
    throw error;
  });
  const output = loaded.manifest.worker.tool_output;
  const toolServer = new ToolServer({
    outputLimits: { defaultMaxBytes: output.default_max_bytes, perTool: output.per_tool ?? {} },
  });
  toolSet.register(toolServer);
  return { loaded, resources, toolSet, toolServer, store, warn, toolWarnings };
}

/** The request config the worker and the log's `segment_start` carry, from `[worker]`. */
export function requestConfig(loaded: LoadedManifest): Record<string, unknown> {
  const { max_tokens, temperature, top_p, top_k, stop_sequences, reasoning } = loaded.manifest.worker;
  const config: Record<string, unknown> = { max_tokens };
  for (const [key, value] of Object.entries({ temperature, top_p, top_k, stop_sequences, reasoning })) {
    if (value !== undefined) config[key] = value;
  }
  return config;
}

export function createWorker(
  parts: PodParts,
  options: PodOptions,
  recorder: SessionRecorder,
  state: {
    systemPrompt?: string;
    history?: Item[];
    config?: Record<string, unknown>;
    interrupted?: boolean;
    /** The restored log's last `llm_usage.history_len`: keeps the cache breakpoints of a restore byte-stable. */
    previousRequestLength?: number;
  },
): Worker {
  const { loaded } = parts;
  return new Worker({
    model: podModelAdapter(loaded.manifest.model, options.model, options.env ?? process.env),
    tools: parts.toolServer,
    config: (state.config ?? requestConfig(loaded)) as never,
    maxRequests: loaded.manifest.worker.max_turns,
    onHistoryAppend: recorder.onHistoryAppend,
    onUsage: recorder.onUsage,
    ...(state.systemPrompt === undefined ? {} : { systemPrompt: state.systemPrompt }),
    ...(state.history === undefined ? {} : { history: state.history }),
    ...(state.interrupted === undefined ? {} : { interrupted: state.interrupted }),
    ...(state.previousRequestLength === undefined
      ? {}
      : { previousRequestLength: state.previousRequestLength }),
  });
}

/**
 * §4.1 materialization: flush the tool server (the names are final), read AGENTS.md, one clock
 * reading, render the body and the catalog's trailing sections.
 */
export async function renderSystemPrompt(
  parts: PodParts,
  template: SystemPromptTemplate,
  clock: (() => Date) | undefined,
): Promise<string> {
  const { loaded } = parts;
  const tools = await parts.toolServer.flushPending();
  const agentsMd = await readAgentsMd(loaded.workspace, { onWarning: parts.warn });
  const context = buildSystemPromptContext({
    ...(clock === undefined ? {} : { clock }),
    cwd: loaded.workspace,
    scope: loaded.scope,
    tools,
    ...(agentsMd === undefined ? {} : { agentsMd }),
    language: loaded.manifest.worker.language,
  });
  return template.render(context, parts.resources.catalog);
}
