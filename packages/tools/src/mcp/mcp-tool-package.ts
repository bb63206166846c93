import type { ToolFactory } from "@podkit/llm-worker";
import {
  type DefinedToolPackage,
  definePodkitToolPackage,
  type ToolPackageContext,
} from "../package/tool-package.js";
import { McpConnection } from "./mcp-connection.js";
import { toWorkerTools } from "./mcp-tools.js";
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
    return toWorkerTools(connection, connection.tools, {
      timeoutMs: slot.config.timeout_ms ?? options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
      warn: ctx.warn,
    });
  });
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
