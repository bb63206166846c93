import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolOutput } from "@podkit/llm-worker";
import type { ToolWarningSink } from "../package/tool-package.js";
import type { ToolSandbox } from "../sandbox/sandbox.js";
import { mapCallToolResult } from "./map-call-result.js";
import { type McpTransport, openTransport } from "./open-transport.js";
import { killSurvivors, listDescendants } from "./process-tree.js";
import type { CheckedMcpServerSpec } from "./server-config.js";

/** How long closing waits for an HTTP server to acknowledge the end of its session. */
const TERMINATE_SESSION_MS = 2000;
/** How long an HTTP server whose stream broke gets to answer a ping before it counts as gone. */
const LIVENESS_PING_MS = 2000;

export interface McpConnectOptions {
  /** Limit for starting the server, the MCP handshake and listing its tools. */
  readonly connectTimeoutMs: number;
  /** The pod's workspace: a stdio server's working directory unless `cwd` says otherwise. */
  readonly workspace: string;
  /** The pod's environment: where `headers_env` variables and a stdio server's inherited ones are read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly warn: ToolWarningSink;
  /** The pod's sandbox: a stdio server starts inside it. */
  readonly sandbox?: ToolSandbox;
  /** Abandons the connect (the pod closed while it was starting). */
  readonly signal: AbortSignal;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One live MCP server: an SDK `Client` over stdio or Streamable HTTP, the tools it listed when
 * connected, and the clean-up that guarantees its process is gone. Failures of a running server
 * (exit, hang, protocol error) come back from `call` as error outputs, never as rejections, except
 * when the caller's own signal aborted.
 */
export class McpConnection {
  private exited = false;
  private closing: Promise<void> | undefined;
  private toolsChangedReported = false;
  /** Aborted when the server is found gone, so calls waiting on it end at once. */
  private readonly gone = new AbortController();
  private probing = false;

  private constructor(
    readonly server: string,
    private readonly client: Client,
    private readonly opened: McpTransport,
    private readonly warn: ToolWarningSink,
    readonly tools: readonly McpTool[],
  ) {}

  /**
   * Starts (stdio) or reaches (HTTP) the server, runs the MCP handshake and lists its tools (every
   * page). On failure everything started is shut down again and the error says why, with the end
   * of the server's stderr when it wrote any.
   */
  static async open(config: CheckedMcpServerSpec, options: McpConnectOptions): Promise<McpConnection> {
    const opened = await openTransport(config, options.env, options.workspace, options.sandbox);
    const client = new Client({ name: "podkit", version: "1" }, { capabilities: {} });
    let connection: McpConnection | undefined;
    // Both stay no-ops until the connection exists (a failed connect is reported by its rejection).
    client.onclose = () => connection?.onServerGone();
    // Over HTTP a server that dies mid-call only breaks the call's event stream (the SDK then
    // reports an error and waits to resume), so check with a ping whether anyone still answers.
    // Other transport errors also reach pending requests as rejections, so nothing else is done.
    client.onerror = () => {
      if (opened.kind === "http") void connection?.probeLiveness();
    };
    let changedBeforeReady = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (connection) connection.reportToolsChanged();
      else changedBeforeReady = true;
    });
    const request = { timeout: options.connectTimeoutMs, signal: options.signal };
    try {
      await client.connect(opened.transport, request);
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, request);
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      connection = new McpConnection(config.name, client, opened, options.warn, tools);
    } catch (error) {
      await closeQuietly(client, opened);
      const stderr = opened.stderrTail();
      throw new Error(
        `${describeServer(config)} could not be connected: ${messageOf(error)}${stderr ? `; its stderr ended with: ${stderr}` : ""}`,
        { cause: error },
      );
    }
    if (changedBeforeReady) connection.reportToolsChanged();
    return connection;
  }

  /**
   * Calls one of the server's tools. The call is cancelled (MCP `notifications/cancelled`) when
   * `signal` aborts — then this rejects with the signal's reason — or after `timeoutMs`, which
   * yields an error output and a warning.
   */
  async call(
    tool: string,
    publicName: string,
    args: unknown,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ToolOutput> {
    if (this.exited || this.closing) return this.goneOutput(publicName);
    const since = this.opened.sandboxed?.refusals() ?? 0;
    try {
      const result = await this.client.callTool(
        { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        { signal: AbortSignal.any([signal, this.gone.signal]), timeout: timeoutMs },
      );
      if ("toolResult" in result && !("content" in result)) {
        return mapCallToolResult(publicName, {
          content: [{ type: "text", text: JSON.stringify(result.toolResult) }],
        });
      }
      return await this.withDenial(mapCallToolResult(publicName, result as CallToolResult), since);
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      // Checked before the timeout: the SDK reports our own abort with the timeout's error code.
      if (
        this.exited ||
        this.gone.signal.aborted ||
        (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)
      ) {
        return this.goneOutput(publicName);
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        this.warn({
          code: "mcp.call_timeout",
          source: `mcp:${this.server}`,
          message: `MCP server "${this.server}" did not answer ${publicName} within ${timeoutMs} ms; the call was cancelled`,
        });
        return {
          summary: `${publicName} timed out: MCP server "${this.server}" did not answer within ${timeoutMs} ms, so the call was cancelled. The server may be hung; try a smaller request or tell the user.`,
          is_error: true,
        };
      }
      return this.withDenial(
        {
          summary: `${publicName} failed: MCP server "${this.server}" answered with an error: ${messageOf(error)}`,
          is_error: true,
        },
        since,
      );
    }
  }

  /**
   * `output` with `denied` when the sandbox refused the server something during this call: a
   * connection (counted from `since`), or, for an error, a file the sandbox hides or keeps
   * read-only named in its text. Concurrent calls to one server share its process, so a
   * connection refused while two calls ran is reported on both.
   */
  private async withDenial(output: ToolOutput, since: number): Promise<ToolOutput> {
    const watched = this.opened.sandboxed;
    if (watched === undefined) return output;
    const text = output.content === undefined ? output.summary : `${output.summary}\n${output.content}`;
    const denied = await watched.denial(text, { failed: output.is_error === true, since });
    return denied === undefined ? output : { ...output, denied };
  }

  /** Closes the client, ends an HTTP session and makes sure no process of a stdio server survives. Idempotent. */
  close(): Promise<void> {
    this.closing ??= closeQuietly(this.client, this.opened);
    return this.closing;
  }

  private goneOutput(publicName: string): ToolOutput {
    const why = this.exited
      ? "is no longer running (it exited or dropped the connection)"
      : "was shut down (the tools are closed)";
    return {
      summary: `${publicName} failed: MCP server "${this.server}" ${why}; its tools stay unavailable until the pod is restarted.`,
      is_error: true,
    };
  }

  private async probeLiveness(): Promise<void> {
    if (this.probing || this.closing || this.exited) return;
    this.probing = true;
    try {
      await this.client.ping({ timeout: LIVENESS_PING_MS });
    } catch {
      this.onServerGone("stopped answering (its connection broke and a ping failed)");
    } finally {
      this.probing = false;
    }
  }

  private onServerGone(how = "closed its connection unexpectedly"): void {
    if (this.closing || this.exited) return;
    this.exited = true;
    const stderr = this.opened.stderrTail();
    this.warn({
      code: "mcp.server_exited",
      source: `mcp:${this.server}`,
      message: `MCP server "${this.server}" ${how}; calls to its tools now fail until the pod is restarted${stderr ? ` (stderr ended with: ${stderr})` : ""}`,
    });
    this.gone.abort(new Error(`MCP server "${this.server}" is gone`));
    // The child may linger half-dead (stdout closed, still running): make sure it is gone.
    void this.close();
  }

  private reportToolsChanged(): void {
    if (this.toolsChangedReported) return;
    this.toolsChangedReported = true;
    this.warn({
      code: "mcp.tools_changed",
      source: `mcp:${this.server}`,
      message: `MCP server "${this.server}" says its tool list changed; the change is not applied: a pod's tools are fixed when its system prompt is rendered (they are part of the cached prompt prefix). Restart the pod to pick up the new list.`,
    });
  }
}

/**
 * How messages name a server: the command without its arguments and the URL without credentials
 * or query, since either may carry a secret and warnings end up in logs.
 */
function describeServer(config: CheckedMcpServerSpec): string {
  if (config.url === undefined) return `MCP server "${config.name}" (${config.command})`;
  const url = new URL(config.url);
  return `MCP server "${config.name}" at ${url.origin}${url.pathname}`;
}

/**
 * Shuts one server down without throwing: ends an HTTP session, closes the client (for stdio the
 * SDK closes stdin, then SIGTERMs, then SIGKILLs its child), then kills whatever of the child's
 * process tree is still running — a launcher's grandchild the SDK never knew about included.
 */
async function closeQuietly(client: Client, opened: McpTransport): Promise<void> {
  const rootPid = opened.pid();
  const tree = rootPid === null ? [] : [rootPid, ...(await listDescendants(rootPid))];
  if (opened.kind === "http") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      opened.terminateSession().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, TERMINATE_SESSION_MS);
      }),
    ]);
    clearTimeout(timer);
  }
  await client.close().catch(() => {});
  // client.close() is a no-op when connect never completed; close the transport itself too.
  await opened.transport.close().catch(() => {});
  if (tree.length > 0) await killSurvivors(tree);
  await opened.sandboxed?.release();
}
