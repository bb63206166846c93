import type { Tool, ToolCallItem, ToolFactory } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { definePodkitToolPackage, loadToolPackages, type PodkitToolPackage } from "@podkit/tools";
import { canonicalJson } from "../context/context-key.js";
import type { PodHooks } from "../pod/hooks.js";
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
}

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
 * workspace (under the manifest's sandbox); `stub` returns a fixed result. The pod that loads
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
      const real = await load(options.manifest);
      const needsLive = real.some((tool) => options.modeOf(tool.name) === "live");
      const live = needsLive
        ? new Map((await load(await options.scratch())).map((t) => [t.name, t]))
        : undefined;
      const wrapped = real.map((tool): Tool => {
        const mode = options.modeOf(tool.name);
        if (mode === "live") return live?.get(tool.name) ?? tool;
        return {
          ...tool,
          execute: (args, { callId }) =>
            mode === "stub" ? (options.stubs[tool.name] ?? DEFAULT_STUB) : replayed(tool, args, callId),
        };
      });
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
 * servers): the eval's tool package serves them in their place. Everything else — scope,
 * approvals policy, prompts — stays.
 */
export function withoutOwnTools(loaded: LoadedManifest): LoadedManifest {
  const { manifest } = loaded;
  return {
    ...loaded,
    manifest: {
      ...manifest,
      tools: { ...manifest.tools, builtin: [], bash: false, packages: [] },
      mcp: { ...manifest.mcp, server: [] },
    },
    toolPackages: [],
  };
}
