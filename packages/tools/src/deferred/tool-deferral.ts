import { type Tool, type ToolFactory, ToolServer } from "@podkit/llm-worker";
import type { DeferSetting } from "@podkit/manifest";
import { type DeferredPairDescriptions, deferredPair } from "./deferred-pair.js";

/**
 * Roughly how many tokens `tools` cost on every request: the UTF-8 bytes of their definitions as
 * the worker sends them (name, description, JSON Schema), divided by four — the estimate podkit
 * uses for context sizes everywhere.
 */
export async function definitionTokens(tools: readonly Tool[]): Promise<number> {
  const probe = new ToolServer();
  for (const tool of tools) probe.registerTool(tool);
  let text: string;
  try {
    await probe.flushPending();
    text = JSON.stringify(probe.definitions());
  } catch {
    // A tool the worker refuses fails the real flush anyway; its name and description still count.
    text = JSON.stringify(tools.map((tool) => ({ name: tool.name, description: tool.description })));
  }
  return Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/** What the deferral decided for one source (a tool package or an MCP server). */
export interface DeferralDecision {
  readonly source: string;
  readonly setting: DeferSetting;
  /** The source's tool definitions' estimated tokens. */
  readonly tokens: number;
  readonly deferred: boolean;
}

/**
 * Which tools of a pod are deferred (docs/tools-deferred.md), decided once per source when its
 * factories run at the tool server's flush: `true` defers all of a source's tools, `"auto"` defers
 * them when their definitions pass `thresholdTokens` (`[tools] defer_auto_share` of the context
 * window), `false` none. The decision holds for the pod's life, so the tools array never changes.
 */
export class ToolDeferral {
  /** Per deferred source, the names of its tools now on the tool server. */
  private readonly deferredSources = new Map<string, string[]>();
  private readonly made: DeferralDecision[] = [];

  constructor(readonly thresholdTokens: number) {}

  /** What was decided so far, per source in flush order. */
  get decisions(): readonly DeferralDecision[] {
    return this.made;
  }

  /** How many tools are deferred now. */
  get deferredCount(): number {
    let count = 0;
    for (const names of this.deferredSources.values()) count += names.length;
    return count;
  }

  /** True when `source`'s tools were deferred at the flush. */
  isDeferredSource(source: string): boolean {
    return this.deferredSources.has(source);
  }

  /**
   * `factories` of one source, deciding its deferral when they run. Several factories become one
   * (`"auto"` weighs the whole source); `false` leaves them as they are.
   */
  wrap(source: string, setting: DeferSetting, factories: readonly ToolFactory[]): ToolFactory[] {
    if (setting === false || factories.length === 0) return [...factories];
    return [
      async () => {
        const tools: Tool[] = [];
        for (const factory of factories) {
          const made = await factory();
          tools.push(...(Array.isArray(made) ? made : [made as Tool]));
        }
        const tokens = setting === "auto" ? await definitionTokens(tools) : 0;
        const deferred = tools.length > 0 && (setting === true || tokens > this.thresholdTokens);
        this.made.push({ source, setting, tokens, deferred });
        if (!deferred) return tools;
        this.deferredSources.set(
          source,
          tools.map((tool) => tool.name),
        );
        return tools.map(asDeferred);
      },
    ];
  }

  /**
   * The `find_tools`/`call_tool` pair on `server`, for a pod whose provider has no native tool
   * search; queue it after every source's factories. It materializes to nothing when no tool
   * ended up deferred, so a pod without deferred tools keeps its tool list as it was.
   */
  pair(server: ToolServer, descriptions: DeferredPairDescriptions): ToolFactory {
    return () => (this.deferredCount > 0 ? deferredPair(server, descriptions) : []);
  }

  /**
   * A deferred source's tools changed (an MCP server's new list): they replace its previous ones
   * on `server`, deferred. Only for a pod that reaches deferred tools through the pair, whose
   * requests never carry them; throws the tool server's `ToolError` when a tool does not fit.
   */
  replace(source: string, server: ToolServer, tools: readonly Tool[]): void {
    const previous = this.deferredSources.get(source);
    if (previous === undefined) throw new Error(`internal: "${source}" has no deferred tools to replace`);
    server.replaceDeferred(previous, tools.map(asDeferred));
    this.deferredSources.set(
      source,
      tools.map((tool) => tool.name),
    );
  }
}

function asDeferred(tool: Tool): Tool {
  return tool.deferred === true ? tool : { ...tool, deferred: true };
}
