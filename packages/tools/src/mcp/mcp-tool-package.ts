import type { ToolFactory } from "@podkit/llm-worker";
import {
  type DefinedToolPackage,
  definePodkitToolPackage,
  type ToolPackageContext,
} from "../package/tool-package.js";
import { McpConnection } from "./mcp-connection.js";
import { toWorkerTools } from "./mcp-tools.js";
import { type CheckedMcpServerConfig, checkMcpServerConfigs, type McpServerConfig } from "./server-config.js";

/** Per-call limit when a server sets no `timeout_ms`. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;
/** Limit for starting a server, the handshake and the tool listing (`timeout_ms` is per call only). */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

export interface McpToolPackageOptions {
  /** Per-call timeout for servers without `timeout_ms` (default 60 s). */
  readonly callTimeoutMs?: number;
  /** Limit for starting each server, its handshake and tool listing (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** Where `headers_env` values are read at connect time (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * One server's lazy factory and its clean-up. The factory connects and lists when the tool server
 * flushes; closing aborts a connect still under way and shuts the server down.
 */
function serverTools(
  config: CheckedMcpServerConfig,
  ctx: ToolPackageContext,
  options: McpToolPackageOptions,
): ToolFactory {
  const abort = new AbortController();
  const onPodAbort = () => abort.abort(ctx.signal.reason);
  ctx.signal.addEventListener("abort", onPodAbort, { once: true });
  let opening: Promise<McpConnection | undefined> | undefined;
  ctx.onClose(async () => {
    ctx.signal.removeEventListener("abort", onPodAbort);
    abort.abort(new Error("the tools were closed"));
    const connection = await opening;
    await connection?.close();
  });
  return async () => {
    opening = McpConnection.open(config, {
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
      env: options.env ?? process.env,
      warn: ctx.warn,
      signal: abort.signal,
    }).catch((error: unknown) => {
      // A server that cannot start costs its own tools, not the pod: warn and carry on without it.
      // (No warning when the pod itself gave up on the connect: nobody is waiting for these tools.)
      if (abort.signal.aborted) return undefined;
      ctx.warn({
        code: "mcp.server_unavailable",
        source: `mcp:${config.name}`,
        message: `${error instanceof Error ? error.message : String(error)}; its tools are left out of this session`,
      });
      return undefined;
    });
    const connection = await opening;
    if (!connection) return [];
    return toWorkerTools(connection, connection.tools, {
      timeoutMs: config.timeout_ms ?? options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
      warn: ctx.warn,
    });
  };
}

/**
 * The tool package for a pod's `[[mcp.server]]` entries: one lazy factory per server, connected
 * at `flushPending()`, offering the server's tools as `mcp__<server>__<tool>`. Each server's
 * process (or HTTP session) is shut down when the tools are closed. Throws `McpConfigError` for
 * an entry that cannot describe a server.
 */
export function mcpToolPackage(
  servers: readonly McpServerConfig[],
  options: McpToolPackageOptions = {},
): DefinedToolPackage {
  const checked = checkMcpServerConfigs(servers);
  return definePodkitToolPackage({
    name: "mcp",
    tools: (ctx) => checked.map((config) => serverTools(config, ctx, options)),
  });
}
