import { type Item, type MediaStore, type ResponseCommit, ToolServer, Worker } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { SessionLogOptions, Store } from "@podkit/session-store";
import { loadToolPackages, type ToolSet } from "@podkit/tools";
import { loadPodResources, type PodResources } from "../resources/index.js";
import type { SkillsVariable } from "../skills/skill-listing.js";
import { readAgentsMd } from "../system-prompt/agents-md.js";
import { buildSystemPromptContext } from "../system-prompt/system-prompt-context.js";
import type { SystemPromptTemplate } from "../system-prompt/system-prompt-template.js";
import { processWarningSink, type WarningSink } from "../warnings.js";
import { CheckedToolServer } from "./checked-tool-server.js";
import { podModelAdapter } from "./model.js";
import { PodEventHub } from "./pod-events.js";
import type { PodOptions } from "./pod-options.js";
import { openSessionStore } from "./store-selection.js";

/**
 * What a pod stands on, built alike by `fromManifest` and `restore` before the pod exists: the
 * loaded manifest, its prompt resources, its tools, the session store, the warning sink (the one
 * channel of warnings) and the event hub (the one fan-out of events).
 */
export interface PodFoundation {
  readonly loaded: LoadedManifest;
  readonly resources: PodResources;
  readonly toolSet: ToolSet;
  readonly toolServer: ToolServer;
  readonly store: Store<Item>;
  /** The pod opened the store itself (no `PodOptions.store`), so it closes it. */
  readonly ownsStore: boolean;
  readonly warn: WarningSink;
  readonly events: PodEventHub;
}

/** The prompt resources of a pod: all four catalog layers on every path (construction and restore). */
export async function loadResources(loaded: LoadedManifest, options: PodOptions): Promise<PodResources> {
  return loadPodResources(loaded, {
    onWarning: options.onWarning ?? processWarningSink,
    ...(options.renderLimits === undefined ? {} : { renderLimits: options.renderLimits }),
  });
}

/**
 * The session store of a pod: `PodOptions.store`, else the one the manifest's `[session]` selects,
 * opened here (`owned`: the pod closes it with itself).
 */
export async function holdStore(
  loaded: LoadedManifest,
  options: PodOptions,
): Promise<{ store: Store<Item>; owned: boolean }> {
  if (options.store !== undefined) return { store: options.store as Store<Item>, owned: false };
  const store = await openSessionStore(loaded, {
    env: options.env ?? process.env,
    ...(options.packages === undefined ? {} : { storePackages: options.packages }),
  });
  return { store: store as Store<Item>, owned: true };
}

/**
 * Opens the session store (unless `PodOptions.store` gives it: `ownsStore` then says whether the
 * pod closes it anyway) and loads the tool packages; a failure closes what the pod owns. The store
 * comes first: a missing database URL fails before any tool package (or MCP server) starts.
 */
export async function loadFoundation(
  loaded: LoadedManifest,
  resources: PodResources,
  options: PodOptions,
  given: { ownsStore?: boolean } = {},
): Promise<PodFoundation> {
  const sink = options.onWarning ?? processWarningSink;
  const events = new PodEventHub(sink);
  // The one path of every warning: the sink (the record a caller keeps, from construction on),
  // and the same warning as a `warning` event for whoever watches the pod at that moment.
  const warn: WarningSink = (warning) => {
    sink(warning);
    events.emit({ type: "warning", code: warning.code, message: warning.message });
  };
  const held = await holdStore(loaded, options);
  const ownsStore = given.ownsStore ?? held.owned;
  const store = held.store;
  const toolSet = await loadToolPackages(loaded, {
    env: options.env ?? process.env,
    warn: (w) => warn({ code: "pod.tools", message: `${w.source}: ${w.message}` }),
    ...(options.toolPackages === undefined ? {} : { extraPackages: options.toolPackages }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    // A sub-pod's sandbox is its parent's loan: it refuses every escalation.
    ...(options.subpod === undefined ? {} : { loaned: true }),
    // File contents for rewind go where the session goes (docs/rewind.md).
    ...(store.blobs === undefined ? {} : { blobs: store.blobs }),
  }).catch(async (error: unknown) => {
    if (ownsStore) await store.close();
    throw error;
  });
  const output = loaded.manifest.worker.tool_output;
  const outputLimits = { defaultMaxBytes: output.default_max_bytes, perTool: output.per_tool ?? {} };
  const toolServer =
    options.toolStartCheck === undefined
      ? new ToolServer({ outputLimits })
      : new CheckedToolServer(options.toolStartCheck, { outputLimits });
  toolSet.register(toolServer);
  return { loaded, resources, toolSet, toolServer, store, ownsStore, warn, events };
}

/** Closes the tools (MCP servers, package clean-ups), then the store when the pod opened it. */
export async function closeFoundation(foundation: PodFoundation): Promise<void> {
  try {
    await foundation.toolSet.close();
  } finally {
    if (foundation.ownsStore) await foundation.store.close();
  }
}

/**
 * The options of every session log the pod opens or creates: another writer's drift fork is
 * reported as a `pod.drift_fork` warning and a `drift_fork` event.
 */
export function sessionLogOptions(foundation: PodFoundation): SessionLogOptions<Item> {
  return {
    onDriftFork: (fork) => {
      foundation.warn({
        code: "pod.drift_fork",
        message: `another writer changed segment ${fork.fromSegmentId} (${fork.actualCount} entries, expected ${fork.expectedCount}); continuing in ${fork.toSegmentId}`,
      });
      foundation.events.emit({ type: "drift_fork", fork });
    },
  };
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

/** A worker's starting state: empty for a new pod, the head segment's folded state on restore. */
export interface WorkerState {
  systemPrompt?: string;
  history?: Item[];
  config?: Record<string, unknown>;
  interrupted?: boolean;
  /** The restored log's last `llm_usage.history_len`: keeps the cache breakpoints of a restore byte-stable. */
  previousRequestLength?: number;
}

/** The worker's persistence callbacks: every committed item, a model response's usage and items in one. */
export interface WorkerPersistence {
  onHistoryAppend(item: Item): Promise<void>;
  onResponseCommit(response: ResponseCommit): Promise<void>;
  /** Where tools' media are stored before their results are committed (docs/media.md). */
  media?: MediaStore;
}

export function createWorker(
  foundation: PodFoundation,
  options: PodOptions,
  persistence: WorkerPersistence,
  state: WorkerState,
): Worker {
  const { loaded } = foundation;
  return new Worker({
    model: podModelAdapter(loaded.manifest.model, options.model, options.env ?? process.env),
    tools: foundation.toolServer,
    config: (state.config ?? requestConfig(loaded)) as never,
    maxRequests: loaded.manifest.worker.max_turns,
    onHistoryAppend: persistence.onHistoryAppend,
    onResponseCommit: persistence.onResponseCommit,
    ...(persistence.media === undefined ? {} : { media: persistence.media }),
    ...(state.systemPrompt === undefined ? {} : { systemPrompt: state.systemPrompt }),
    ...(state.history === undefined ? {} : { history: state.history }),
    ...(state.interrupted === undefined ? {} : { interrupted: state.interrupted }),
    ...(state.previousRequestLength === undefined
      ? {}
      : { previousRequestLength: state.previousRequestLength }),
  });
}

/**
 * Materialization: the skill listing (measured, and the `skill` tool's mode settled, before the
 * tools are), flush the tool server (the names are final), read AGENTS.md, one clock reading,
 * render the body and the catalog's trailing sections.
 */
export async function renderSystemPrompt(
  foundation: PodFoundation,
  template: SystemPromptTemplate,
  clock: (() => Date) | undefined,
  renderSkills?: () => Promise<SkillsVariable>,
): Promise<string> {
  const { loaded } = foundation;
  const skills = await renderSkills?.();
  const tools = await foundation.toolServer.flushPending();
  const agentsMd = await readAgentsMd(loaded.workspace, { onWarning: foundation.warn });
  const context = buildSystemPromptContext({
    ...(clock === undefined ? {} : { clock }),
    cwd: loaded.workspace,
    scope: loaded.scope,
    tools,
    ...(agentsMd === undefined ? {} : { agentsMd }),
    language: loaded.manifest.worker.language,
    ...(skills === undefined ? {} : { skills }),
  });
  return template.render(context, foundation.resources.catalog);
}
