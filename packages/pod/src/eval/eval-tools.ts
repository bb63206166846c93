import type { Tool, ToolCallItem, ToolFactory } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import { definePodkitToolPackage, loadToolPackages, type PodkitToolPackage } from "@podkit/tools";
import type { PodPrompt, PodPromptContextArgs } from "../catalog/pod-prompt.js";
import { canonicalJson } from "../context/context-key.js";
import type { PodHooks } from "../pod/hooks.js";
import { type RecordedMcpTool, readRecordedMcpTools } from "../pod/mcp-tools-record.js";
import { loadPodResources } from "../resources/index.js";
import { loadSubpodRoles } from "../subpods/roles.js";
import { type SubpodToolTarget, subpodTools } from "../subpods/subpod-tools.js";
import type { Divergence, ToolMode } from "./eval-types.js";
import type { RecordedTurn } from "./recorded-turns.js";

/** A fixed tool result (`stub` mode), or one taken from the recording (`replay`). */
export interface ToolOutputStub {
  readonly summary: string;
  readonly content?: string;
  readonly is_error?: boolean;
}

/** The package's name, as warnings name it. */
export const EVAL_TOOLS_PACKAGE = "@podkit/pod:eval-tools";

/** The result of a `stub` tool without one configured. */
export const DEFAULT_STUB: ToolOutputStub = { summary: "(stubbed by the eval: no result configured)" };

/** What one eval item's tools need. */
export interface EvalToolsOptions {
  /** The manifest whose tools the item has (the variant's, before they were moved into this package). */
  readonly manifest: LoadedManifest;
  /** Tool packages given in code (`PodOptions.toolPackages`), served like the manifest's. */
  readonly extraPackages: readonly PodkitToolPackage[];
  readonly modeOf: (tool: string) => ToolMode;
  /** The recorded turns whose results `replay` serves. */
  readonly recorded: readonly RecordedTurn[];
  readonly stubs: Readonly<Record<string, ToolOutputStub>>;
  /** The manifest rebased into a scratch copy of the workspace, for `live` tools (made when first needed). */
  readonly scratch: () => Promise<LoadedManifest>;
  /** The item's turn in progress (1-based), for divergences. */
  readonly turn: () => number;
  readonly onDivergence: (divergence: Divergence) => void;
  /** The recorded session: where the tools its MCP servers offered are read (`mcp.tools`). */
  readonly source?: { readonly store: Store; readonly sessionId: string };
}

/** The tool whose mode says whether an item's children run: the sub-pod tools follow it. */
const SPAWN_TOOL = "spawn_pod";

/** The key of a recorded result: tool name and the arguments' canonical JSON (keys sorted). */
export function callKey(name: string, args: string | unknown): string {
  let value: unknown = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch {
      value = args;
    }
  }
  return `${name}\u0000${canonicalJson(value)}`;
}

/**
 * The tools of an eval item: the manifest's own tools (same names, descriptions and schemas, so
 * the request prefix is the recording's byte for byte), each served in its mode. `replay` answers
 * from the recording by name and canonical arguments — repeated calls get the recorded results in
 * order, the last one again after that — and answers a call never recorded with an error result
 * saying so, reported as a divergence. `live` runs the real tool in a scratch copy of the
 * workspace (under the manifest's sandbox); `stub` returns a fixed result. An MCP server the
 * source session recorded (`mcp.tools`) is not started unless one of its tools is `live`: its
 * tools are the recorded definitions. Unless `spawn_pod` is `live`, no child runs: the four
 * sub-pod tools are served here and answer from the recording (or a stub). The pod that loads
 * this package must not load the manifest's tools itself (`withoutOwnTools`). `hooks` must be
 * registered on the same pod: they see each call's arguments as the model sent them.
 */
export function evalTools(options: EvalToolsOptions): { package: PodkitToolPackage; hooks: PodHooks } {
  const sentArguments = new Map<string, string>();
  const recordings = new Map<string, ToolOutputStub[]>();
  for (const turn of options.recorded) {
    for (const call of turn.toolCalls) {
      if (call.result === undefined) continue;
      const key = callKey(call.name, call.arguments);
      recordings.set(key, [...(recordings.get(key) ?? []), call.result]);
    }
  }
  const served = new Map<string, number>();
  const replayed = (tool: Tool, args: unknown, callId: string): ToolOutputStub => {
    const raw = sentArguments.get(callId);
    const key = callKey(tool.name, raw ?? args);
    const results = recordings.get(key);
    if (results === undefined || results.length === 0) {
      const text = raw ?? canonicalJson(args);
      options.onDivergence({ turn: options.turn(), tool: tool.name, arguments: text });
      return {
        summary: `eval replay: this call was not recorded (tool ${tool.name} with these arguments never ran in the source session), so it has no result; answer without it or call it as the recording did`,
        is_error: true,
      };
    }
    const index = served.get(key) ?? 0;
    served.set(key, index + 1);
    return results[Math.min(index, results.length - 1)] as ToolOutputStub;
  };

  const serve = (tool: Tool, mode: ToolMode): Tool => ({
    ...tool,
    execute: (args, { callId }) =>
      mode === "stub" ? (options.stubs[tool.name] ?? DEFAULT_STUB) : replayed(tool, args, callId),
  });

  const pkg = definePodkitToolPackage({
    name: EVAL_TOOLS_PACKAGE,
    async tools(ctx) {
      const load = async (manifest: LoadedManifest) => {
        const set = await loadToolPackages(manifest, {
          env: ctx.env,
          warn: ctx.warn,
          signal: ctx.signal,
          extraPackages: options.extraPackages,
        });
        ctx.onClose(() => set.close());
        return materialize(set.factories);
      };
      // MCP servers whose tools the recording lists, none of them live, are not started: their
      // tools are the recorded definitions. Servers the recording does not know start as before.
      const { source } = options;
      const record =
        source === undefined ? undefined : await readRecordedMcpTools(source.store, source.sessionId);
      const fromRecord = new Map<string, readonly RecordedMcpTool[]>();
      for (const server of options.manifest.manifest.mcp.server) {
        const tools = record?.servers.find((recorded) => recorded.name === server.name)?.tools;
        // A deferred server's tools reach the model through the pod's deferral of that server (the
        // find_tools/call_tool pair, or native search): it is started for its definitions, and
        // its calls are still answered from the recording.
        const replayable = tools?.every(
          (tool) => options.modeOf(tool.name) !== "live" && tool.deferred !== true,
        );
        if (tools !== undefined && replayable === true) fromRecord.set(server.name, tools);
      }
      const started = (manifest: LoadedManifest) => withMcpServers(manifest, (name) => !fromRecord.has(name));
      const real = await load(started(options.manifest));
      const needsLive = real.some((tool) => options.modeOf(tool.name) === "live");
      const live = needsLive
        ? new Map((await load(started(await options.scratch()))).map((t) => [t.name, t]))
        : undefined;
      const wrapped = real.map((tool): Tool => {
        const mode = options.modeOf(tool.name);
        if (mode === "live") return live?.get(tool.name) ?? tool;
        return serve(tool, mode);
      });
      for (const tools of fromRecord.values()) {
        for (const tool of tools) wrapped.push(serve(recordedTool(tool), options.modeOf(tool.name)));
      }
      if (options.modeOf(SPAWN_TOOL) !== "live") {
        // Children are not run: the sub-pod tools, as the pod would offer them, answer from the recording.
        for (const tool of await subpodToolsOf(options.manifest)) {
          const mode = options.modeOf(tool.name);
          wrapped.push(serve(tool, mode === "live" ? "replay" : mode));
        }
      }
      const factory: ToolFactory = () => wrapped;
      return [factory];
    },
  });
  const hooks: PodHooks = {
    preToolCall(call: Readonly<ToolCallItem>) {
      sentArguments.set(call.call_id, call.arguments);
      return { action: "continue" };
    },
  };
  return { package: pkg, hooks };
}

/** Calls every factory (as the tool server would at `flushPending()`). */
async function materialize(factories: readonly ToolFactory[]): Promise<Tool[]> {
  const tools: Tool[] = [];
  for (const factory of factories) {
    const made = await factory();
    if (Array.isArray(made)) tools.push(...(made as readonly Tool[]));
    else tools.push(made as Tool);
  }
  return tools;
}

/**
 * The manifest with its own tools taken out (`[tools] builtin`, `bash`, `packages`, MCP
 * servers, and the sub-pod roles unless `spawn_pod` is `live`): the eval's tool package serves
 * them in their place. Everything else — scope, approvals policy, prompts — stays.
 */
export function withoutOwnTools(
  loaded: LoadedManifest,
  modeOf: (tool: string) => ToolMode = () => "replay",
): LoadedManifest {
  const { manifest } = loaded;
  return {
    ...loaded,
    manifest: {
      ...manifest,
      tools: { ...manifest.tools, builtin: [], bash: false, packages: [] },
      mcp: { ...manifest.mcp, server: [] },
      ...(modeOf(SPAWN_TOOL) === "live" ? {} : { subpods: {} }),
    },
    toolPackages: [],
  };
}

/** The manifest with only the `[[mcp.server]]` entries `keep` accepts. */
function withMcpServers(loaded: LoadedManifest, keep: (server: string) => boolean): LoadedManifest {
  const { manifest } = loaded;
  const server = manifest.mcp.server.filter((entry) => keep(entry.name));
  if (server.length === manifest.mcp.server.length) return loaded;
  return { ...loaded, manifest: { ...manifest, mcp: { ...manifest.mcp, server } } };
}

/** A recorded MCP tool as the worker takes it (its execute is replaced by the eval's). */
function recordedTool(tool: RecordedMcpTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema as Tool["inputSchema"],
    ...(tool.read_only === true ? { readOnly: true } : {}),
    execute: () => ({ summary: "" }),
  };
}

/** Children are never started from here: every sub-pod tool's execute is replaced. */
const NO_CHILDREN: SubpodToolTarget = {
  spawn: () => Promise.reject(new Error("an eval item runs no child")),
  send: () => Promise.reject(new Error("an eval item runs no child")),
  stop: () => Promise.reject(new Error("an eval item runs no child")),
  list: () => Promise.reject(new Error("an eval item runs no child")),
};

/**
 * The sub-pod tools a root pod of `loaded` offers (none without roles): the same names, schemas
 * and descriptions — rendered from the variant's catalog with its roles — so the request prefix
 * is the recording's.
 */
async function subpodToolsOf(loaded: LoadedManifest): Promise<Tool[]> {
  if (Object.keys(loaded.manifest.subpods ?? {}).length === 0) return [];
  const roles = await loadSubpodRoles(loaded);
  // The pod loads the same catalog and reports its warnings; this copy only renders descriptions.
  const { catalog } = await loadPodResources(loaded, { onWarning: () => {} });
  const text = <K extends PodPrompt>(key: K, ...context: PodPromptContextArgs<K>) =>
    catalog.render(key, ...context);
  return subpodTools(roles, NO_CHILDREN, 0, text);
}
