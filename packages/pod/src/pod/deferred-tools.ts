import type { Item } from "@podkit/llm-worker";
import { MCP_TOOLS_CHANGED_DOMAIN, type McpToolsChanged } from "@podkit/tools";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import type { PodFoundation } from "./pod-foundation.js";

/**
 * Registers the `find_tools`/`call_tool` pair (docs/tools-deferred.md) on the pod's tool server
 * when its provider has no tool search of its own (`nativeToolSearch` undefined): queued after the
 * tool packages, it materializes only when some tool ended up deferred. Descriptions come from the
 * catalog, so they are part of the cached prefix like every tool description.
 */
export function registerDeferredPair(
  foundation: PodFoundation,
  catalog: PromptCatalog,
  nativeToolSearch: string | undefined,
): void {
  if (nativeToolSearch !== undefined) return;
  foundation.toolServer.registerTool(
    foundation.toolSet.deferredPair(foundation.toolServer, {
      findTools: catalog.render("find_tools_description", {}),
      callTool: catalog.render("call_tool_description", {}),
    }),
  );
}

/** What `PodToolChanges` needs of the pod. */
export interface PodToolChangesOptions {
  readonly catalog: PromptCatalog;
  /** Appends an `extension` entry to the head segment. */
  append(domain: string, payload: unknown): Promise<void>;
  /** A `system_item{kind:"notification"}` carrying `text`. */
  systemItem(text: string): Item;
  /** Reports the notification on the pod's event stream. */
  notified(message: string): void;
}

/**
 * MCP servers' changed tool lists, on their way into the session: each is logged as an
 * `mcp.tools_changed` entry and then told to the model as a notification, before the next request
 * (never as a change to the tools array, which stays as the session began).
 */
export class PodToolChanges {
  private pending: McpToolsChanged[] = [];

  constructor(private readonly options: PodToolChangesOptions) {}

  /** A change arrived (any time: idle, or during a run); it enters at the next request. */
  push(change: McpToolsChanged): void {
    this.pending.push(change);
  }

  /** The pending changes, logged, as notification items for the next request. */
  async take(): Promise<Item[]> {
    const items: Item[] = [];
    for (const change of this.pending.splice(0)) {
      await this.options.append(MCP_TOOLS_CHANGED_DOMAIN, change);
      const message = this.options.catalog.render("mcp_tools_changed", change);
      this.options.notified(message);
      items.push(this.options.systemItem(this.options.catalog.render("notify_wrapper", { message })));
    }
    return items;
  }
}
