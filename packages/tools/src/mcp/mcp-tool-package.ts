import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { Tool, ToolFactory } from "@podkit/llm-worker";
import {
  type DefinedToolPackage,
  definePodkitToolPackage,
  type ToolPackageContext,
} from "../package/tool-package.js";
import { McpConnection } from "./mcp-connection.js";
import { mcpToolName, toWorkerTools } from "./mcp-tools.js";
import { type CheckedMcpServerSpec, checkMcpServerSpecs, type McpServerSpec } from "./server-config.js";

/** Per-call limit when a server sets no `timeout_ms`. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;
/** Limit for starting a server, the handshake and the tool listing (`timeout_ms` is per call only). */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

export interface McpToolPackageOptions {
  /** Per-call timeout for servers without `timeout_ms` (default 60 s). */
  readonly callTimeoutMs?: number;
  /** Limit for starting each server, its handshake and tool listing (default 30 s). */
  readonly connectTimeoutMs?: number;
  /**
   * A server's tool list changed after the flush (docs/tools-deferred.md, "When a server's tools
   * change"). Without it the change is only a `mcp.tools_changed` warning.
   */
  readonly onToolsChanged?: (change: McpToolsChange) => void;
}

/**
 * A server's tool list as it changed: its tools now (as worker tools, named as the model sees them)
 * and the names added, removed and changed (description, schema or annotations) since the last list.
 */
export interface McpToolsChange {
  readonly server: string;
  readonly tools: readonly Tool[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

/**
 * One server's connection as the package manages it: started at most once (when the first of the
 * package's factories runs), abandoned and shut down when the tools are closed.
 */
class ServerSlot {
  private readonly abort = new AbortController();
  private opening: Promise<McpConnection | undefined> | undefined;

  constructor(
    readonly config: CheckedMcpServerSpec,
    private readonly ctx: ToolPackageContext,
    private readonly options: McpToolPackageOptions,
  ) {
    const onPodAbort = () => this.abort.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", onPodAbort, { once: true });
    ctx.onClose(async () => {
      ctx.signal.removeEventListener("abort", onPodAbort);
      this.abort.abort(new Error("the tools were closed"));
      const connection = await this.opening;
      await connection?.close();
    });
  }

  /** Connects (once); resolves to undefined, after a warning, when the server cannot be used. */
  connect(): Promise<McpConnection | undefined> {
    this.opening ??= this.open();
    return this.opening;
  }

  private async open(): Promise<McpConnection | undefined> {
    // The pod gave up (or closed) before the flush: start nothing.
    if (this.abort.signal.aborted) return undefined;
    try {
      return await McpConnection.open(this.config, {
        connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
        env: this.ctx.env,
        workspace: this.ctx.workspace,
        warn: this.ctx.warn,
        sandbox: this.ctx.sandbox,
        signal: this.abort.signal,
      });
    } catch (error) {
      // A server that cannot start costs its own tools, not the pod: warn and carry on without it.
      // (No warning when the pod itself gave up on the connect: nobody is waiting for these tools.)
      if (!this.abort.signal.aborted) {
        this.ctx.warn({
          code: "mcp.server_unavailable",
          source: `mcp:${this.config.name}`,
          message: `${error instanceof Error ? error.message : String(error)}; its tools are left out of this session`,
        });
      }
      return undefined;
    }
  }
}

/**
 * One lazy factory per server. The tool server runs factories one after another, so the first
 * one to run starts every server: they come up side by side and a flush waits for the slowest
 * server, not for the sum of them.
 */
function serverFactories(
  servers: readonly CheckedMcpServerSpec[],
  ctx: ToolPackageContext,
  options: McpToolPackageOptions,
): ToolFactory[] {
  const slots = servers.map((config) => new ServerSlot(config, ctx, options));
  return slots.map((slot) => async () => {
    for (const other of slots) void other.connect();
    const connection = await slot.connect();
    if (!connection) return [];
    const convert = {
      timeoutMs: slot.config.timeout_ms ?? options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
      warn: ctx.warn,
    };
    // Changes are reported one after another, in the order the server's lists came.
    let reported = Promise.resolve();
    connection.onToolsChanged = (previous, next) => {
      reported = reported.then(async () => {
        const change = {
          server: slot.config.name,
          tools: await toWorkerTools(connection, next, convert),
          ...diffTools(slot.config.name, previous, next),
        };
        ctx.warn({
          code: "mcp.tools_changed",
          source: `mcp:${slot.config.name}`,
          message: `MCP server "${slot.config.name}" changed its tools (${describeChange(change)}); the change is not applied to the session's tools array, which never changes (a deferred server's new tools reach find_tools; docs/tools-deferred.md)`,
        });
        options.onToolsChanged?.(change);
      });
    };
    return toWorkerTools(connection, connection.tools, convert);
  });
}

/** What differs between two lists of a server's tools, by the names the model sees. */
function diffTools(
  server: string,
  previous: readonly McpTool[],
  next: readonly McpTool[],
): Pick<McpToolsChange, "added" | "removed" | "changed"> {
  const keyed = (tools: readonly McpTool[]) =>
    new Map(
      tools.map((tool) => [
        mcpToolName(server, tool.name),
        JSON.stringify([tool.description, tool.title, tool.inputSchema, tool.annotations]),
      ]),
    );
  const before = keyed(previous);
  const after = keyed(next);
  const sorted = (names: string[]) => names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    added: sorted([...after.keys()].filter((name) => !before.has(name))),
    removed: sorted([...before.keys()].filter((name) => !after.has(name))),
    changed: sorted(
      [...after.keys()].filter((name) => before.has(name) && before.get(name) !== after.get(name)),
    ),
  };
}

function describeChange(change: Pick<McpToolsChange, "added" | "removed" | "changed">): string {
  const parts = [
    change.added.length > 0 ? `added ${change.added.join(", ")}` : "",
    change.removed.length > 0 ? `removed ${change.removed.join(", ")}` : "",
    change.changed.length > 0 ? `changed ${change.changed.join(", ")}` : "",
  ].filter((part) => part !== "");
  return parts.length > 0 ? parts.join("; ") : "no tool it offers";
}

/**
 * The tool package for a pod's `[[mcp.server]]` entries: one lazy factory per server, connected
 * at `flushPending()`, offering the server's tools as `mcp__<server>__<tool>`. Each server's
 * process (or HTTP session) is shut down when the tools are closed. Throws `McpConfigError` for
 * an entry that cannot describe a server.
 */
export function mcpToolPackage(
  servers: readonly McpServerSpec[],
  options: McpToolPackageOptions = {},
): DefinedToolPackage {
  const checked = checkMcpServerSpecs(servers);
  return definePodkitToolPackage({
    name: "mcp",
    tools: (ctx) => serverFactories(checked, ctx, options),
  });
}
