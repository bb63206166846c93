import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolOutput } from "@podkit/llm-worker";
import { z } from "zod";
import type { ToolWarningSink } from "../package/tool-package.js";
import type { ToolSandbox } from "../sandbox/sandbox.js";
import { DualEraClient, type McpEra } from "./dual-era-client.js";
import { mapCallToolResult } from "./map-call-result.js";
import { type McpTransport, openTransport } from "./open-transport.js";
import { killSurvivors, listDescendants } from "./process-tree.js";
import type { CheckedMcpServerSpec } from "./server-config.js";

/** How long closing waits for an HTTP server to acknowledge the end of its session. */
const TERMINATE_SESSION_MS = 2000;
/** How long an HTTP server whose stream broke gets to answer a ping before it counts as gone. */
const LIVENESS_PING_MS = 2000;
/** A `subscriptions/listen` request stays open for the connection's life (setTimeout's maximum). */
const LISTEN_TIMEOUT_MS = 2_147_483_647;

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

/** One client on one transport: replaced as a whole when a legacy HTTP session expires. */
interface Live {
  readonly client: DualEraClient;
  readonly opened: McpTransport;
  /** Ends the modern `subscriptions/listen` request, when one is open. */
  listen?: AbortController;
}

/** What the connection's clients report to it, naming the client they came from. */
interface LiveEvents {
  closed(live: Live): void;
  failed(live: Live, error: Error): void;
  toolsChanged(live: Live): void;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One live MCP server: a dual-era client (`DualEraClient`: the stateless 2026-07-28 revision or a
 * legacy handshake) over stdio or Streamable HTTP, the tools it lists, and the clean-up that
 * guarantees its process is gone. Failures of a running server (exit, hang, protocol error) come
 * back from `call` as error outputs, never as rejections, except when the caller's own signal
 * aborted. A legacy HTTP session the server expired (HTTP 404 for the session) is opened anew once;
 * a server's changed tool list is reported through `onToolsChanged`.
 */
export class McpConnection {
  private exited = false;
  private closing: Promise<void> | undefined;
  /** Aborted when the server is found gone, so calls waiting on it end at once. */
  private readonly gone = new AbortController();
  private probing: Promise<void> | undefined;
  private renewing: Promise<boolean> | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /**
   * The tool list changed (`notifications/tools/list_changed`, or another list after a session
   * was opened anew): the list as it was, and as it is now (already in `tools`).
   */
  onToolsChanged: ((previous: readonly McpTool[], next: readonly McpTool[]) => void) | undefined;

  private constructor(
    readonly server: string,
    private live: Live,
    private listed: McpTool[],
    private readonly config: CheckedMcpServerSpec,
    private readonly options: McpConnectOptions,
    private readonly events: LiveEvents,
  ) {}

  /** The tools the server lists now. */
  get tools(): readonly McpTool[] {
    return this.listed;
  }

  /** The protocol era the server speaks. */
  get era(): McpEra {
    return this.live.client.era ?? "legacy";
  }

  /**
   * Starts (stdio) or reaches (HTTP) the server, finds its protocol era, runs the legacy handshake
   * where it needs one and lists its tools (every page). On failure everything started is shut down
   * again and the error says why, with the end of the server's stderr when it wrote any.
   */
  static async open(config: CheckedMcpServerSpec, options: McpConnectOptions): Promise<McpConnection> {
    let connection: McpConnection | undefined;
    let changedBeforeReady = false;
    // No-ops until the connection exists (a failed connect is reported by its rejection).
    const events: LiveEvents = {
      closed: (live) => connection?.onClosed(live),
      failed: (live, error) => connection?.onFailed(live, error),
      toolsChanged: (live) => {
        if (connection) connection.onListChanged(live);
        else changedBeforeReady = true;
      },
    };
    const { live, tools } = await connectLive(config, options, events);
    connection = new McpConnection(config.name, live, tools, config, options, events);
    if (changedBeforeReady) connection.onListChanged(live);
    return connection;
  }

  /**
   * Calls one of the server's tools. The call is cancelled (MCP `notifications/cancelled`) when
   * `signal` aborts — then this rejects with the signal's reason — or after `timeoutMs`, which
   * yields an error output and a warning.
   */
  async call(
    tool: McpTool,
    publicName: string,
    args: unknown,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ToolOutput> {
    if (this.exited || this.closing) return this.goneOutput(publicName);
    const live = this.live;
    const since = live.opened.sandboxed?.refusals() ?? 0;
    try {
      return await this.attempt(live, tool.name, publicName, args, signal, timeoutMs, since);
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (!sessionExpired(live, error)) return this.failure(live, error, publicName, timeoutMs, since);
      return this.afterExpiry(live, tool, publicName, args, signal, timeoutMs);
    }
  }

  /** One `tools/call` on `live`; throws what the client threw. */
  private async attempt(
    live: Live,
    tool: string,
    publicName: string,
    args: unknown,
    signal: AbortSignal,
    timeoutMs: number,
    since: number,
  ): Promise<ToolOutput> {
    const result = await live.client.callTool(
      { name: tool, arguments: (args ?? {}) as Record<string, unknown> },
      undefined,
      { signal: AbortSignal.any([signal, this.gone.signal]), timeout: timeoutMs },
    );
    if ((result as { resultType?: unknown }).resultType === "input_required") {
      return {
        summary: `${publicName} failed: MCP server "${this.server}" asked for input before it would go on (elicitation or sampling), which podkit does not give`,
        is_error: true,
      };
    }
    if ("toolResult" in result && !("content" in result)) {
      return mapCallToolResult(publicName, {
        content: [{ type: "text", text: JSON.stringify(result.toolResult) }],
      });
    }
    return await this.withDenial(live, mapCallToolResult(publicName, result as CallToolResult), since);
  }

  /**
   * A call whose legacy session had expired: the session is opened anew once (calls that hit the
   * same expiry share it), then the call is sent again only when the server marks the tool
   * idempotent or read-only; another call might run twice, so the model is told instead.
   */
  private async afterExpiry(
    expired: Live,
    tool: McpTool,
    publicName: string,
    args: unknown,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ToolOutput> {
    if (!(await this.renew(expired))) return this.goneOutput(publicName);
    if (tool.annotations?.idempotentHint !== true && tool.annotations?.readOnlyHint !== true) {
      return {
        summary: `${publicName} failed: MCP server "${this.server}" had ended its session (HTTP 404) when the call reached it. podkit opened a new session, but repeats only calls the server marks idempotent or read-only, and this tool is neither: call it again if it should still run.`,
        is_error: true,
      };
    }
    const live = this.live;
    const since = live.opened.sandboxed?.refusals() ?? 0;
    try {
      return await this.attempt(live, tool.name, publicName, args, signal, timeoutMs, since);
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      return this.failure(live, error, publicName, timeoutMs, since);
    }
  }

  /**
   * What a failed call tells the model; a timeout is also a warning. Over HTTP an error of the
   * transport itself (the POST failed, its stream broke) may be the server dying: it is asked
   * whether it still answers before the error is put down to anything else.
   */
  private async failure(
    live: Live,
    error: unknown,
    publicName: string,
    timeoutMs: number,
    since: number,
  ): Promise<ToolOutput> {
    if (live.opened.kind === "http" && !(error instanceof McpError) && live === this.live) {
      await this.probeLiveness();
    }
    // Checked before the timeout: the SDK reports our own abort with the timeout's error code.
    if (
      this.exited ||
      this.gone.signal.aborted ||
      (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)
    ) {
      return this.goneOutput(publicName);
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      this.options.warn({
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
      live,
      {
        summary: `${publicName} failed: MCP server "${this.server}" answered with an error: ${messageOf(error)}`,
        is_error: true,
      },
      since,
    );
  }

  /**
   * Opens a new session after `expired`'s ended (once; calls that saw the same expiry wait for the
   * same attempt), lists the tools again and reports a changed list. False when the server
   * cannot be reached again: it then counts as gone.
   */
  private renew(expired: Live): Promise<boolean> {
    if (this.live !== expired) return Promise.resolve(!this.exited);
    this.renewing ??= (async () => {
      this.options.warn({
        code: "mcp.session_expired",
        source: `mcp:${this.server}`,
        message: `MCP server "${this.server}" ended its session (HTTP 404); podkit is opening a new one`,
      });
      try {
        const { live, tools } = await connectLive(this.config, this.options, this.events);
        if (this.closing) {
          await closeQuietly(live.client, live.opened);
          return false;
        }
        this.live = live;
        // The old session is gone on the server: nothing to end there.
        void closeQuietly(expired.client, expired.opened, { terminate: false });
        this.update(tools);
        return true;
      } catch (error) {
        this.onServerGone(`could not be reached again after it ended its session (${messageOf(error)})`);
        return false;
      } finally {
        this.renewing = undefined;
      }
    })();
    return this.renewing;
  }

  /**
   * `output` with `denied` when the sandbox refused the server something during this call: a
   * connection (counted from `since`), or, for an error, a file the sandbox hides or keeps
   * read-only named in its text. Concurrent calls to one server share its process, so a
   * connection refused while two calls ran is reported on both.
   */
  private async withDenial(live: Live, output: ToolOutput, since: number): Promise<ToolOutput> {
    const watched = live.opened.sandboxed;
    if (watched === undefined) return output;
    const text = output.content === undefined ? output.summary : `${output.summary}\n${output.content}`;
    const denied = await watched.denial(text, { failed: output.is_error === true, since });
    return denied === undefined ? output : { ...output, denied };
  }

  /** Closes the client, ends an HTTP session and makes sure no process of a stdio server survives. Idempotent. */
  close(): Promise<void> {
    this.closing ??= closeQuietly(this.live.client, this.live.opened, { listen: this.live.listen });
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

  private onClosed(live: Live): void {
    // A client replaced after its session expired closes as it is let go: not the server's end.
    if (live === this.live) this.onServerGone();
  }

  private onFailed(live: Live, error: Error): void {
    // An expired session is handled by the call that met it; an old client's errors are over.
    if (live !== this.live || sessionExpired(live, error)) return;
    // Over HTTP a server that dies mid-call only breaks the call's event stream (the SDK then
    // reports an error and waits to resume), so check with a ping whether anyone still answers.
    // Other transport errors also reach pending requests as rejections, so nothing else is done.
    if (live.opened.kind === "http") void this.probeLiveness();
  }

  /** Pings the server (one ping at a time; callers share it); a failed ping means it is gone. */
  private probeLiveness(): Promise<void> {
    if (this.closing || this.exited) return Promise.resolve();
    this.probing ??= (async () => {
      try {
        await this.live.client.ping({ timeout: LIVENESS_PING_MS });
      } catch {
        this.onServerGone("stopped answering (its connection broke and a ping failed)");
      } finally {
        this.probing = undefined;
      }
    })();
    return this.probing;
  }

  private onServerGone(how = "closed its connection unexpectedly"): void {
    if (this.closing || this.exited) return;
    this.exited = true;
    const stderr = this.live.opened.stderrTail();
    this.options.warn({
      code: "mcp.server_exited",
      source: `mcp:${this.server}`,
      message: `MCP server "${this.server}" ${how}; calls to its tools now fail until the pod is restarted${stderr ? ` (stderr ended with: ${stderr})` : ""}`,
    });
    this.gone.abort(new Error(`MCP server "${this.server}" is gone`));
    // The child may linger half-dead (stdout closed, still running): make sure it is gone.
    void this.close();
  }

  /** `notifications/tools/list_changed`: the list is read again (one listing at a time, the last one wins). */
  private onListChanged(live: Live): void {
    if (live !== this.live) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        if (this.closing || this.exited) return;
        try {
          this.update(await listAllTools(this.live.client, { timeout: this.options.connectTimeoutMs }));
        } catch (error) {
          this.options.warn({
            code: "mcp.tools_changed",
            source: `mcp:${this.server}`,
            message: `MCP server "${this.server}" says its tool list changed, but listing its tools again failed: ${messageOf(error)}`,
          });
        }
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
  }

  private update(next: McpTool[]): void {
    const previous = this.listed;
    if (JSON.stringify(previous) === JSON.stringify(next)) return;
    this.listed = next;
    this.onToolsChanged?.(previous, next);
  }
}

/** Whether `error` is a legacy HTTP session's end: HTTP 404 to a request that carried a session id. */
function sessionExpired(live: Live, error: unknown): boolean {
  return (
    live.opened.kind === "http" &&
    live.client.era === "legacy" &&
    live.opened.transport.sessionId !== undefined &&
    error instanceof StreamableHTTPError &&
    error.code === 404
  );
}

/**
 * Starts or reaches the server with a fresh client, finds its era (running the legacy handshake
 * where needed), lists its tools, and opens the modern change subscription when the server has one.
 */
async function connectLive(
  config: CheckedMcpServerSpec,
  options: McpConnectOptions,
  events: LiveEvents,
): Promise<{ live: Live; tools: McpTool[] }> {
  const opened = await openTransport(config, options.env, options.workspace, options.sandbox);
  const client = new DualEraClient();
  const live: Live = { client, opened };
  client.onclose = () => events.closed(live);
  client.onerror = (error) => events.failed(live, error);
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.toolsChanged(live));
  const request = { timeout: options.connectTimeoutMs, signal: options.signal };
  try {
    await client.connect(opened.transport, request);
    const tools = await listAllTools(client, request);
    if (client.era === "modern" && client.announcesToolChanges) live.listen = listenForToolChanges(client);
    return { live, tools };
  } catch (error) {
    await closeQuietly(client, opened);
    const stderr = opened.stderrTail();
    throw new Error(
      `${describeServer(config)} could not be connected: ${messageOf(error)}${stderr ? `; its stderr ended with: ${stderr}` : ""}`,
      { cause: error },
    );
  }
}

async function listAllTools(
  client: DualEraClient,
  request: { timeout: number; signal?: AbortSignal },
): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, request);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/**
 * The modern way to hear of a changed tool list: a `subscriptions/listen` request for
 * `toolsListChanged`, open until the connection closes; its notifications reach the client's
 * `notifications/tools/list_changed` handler like a legacy server's.
 */
function listenForToolChanges(client: DualEraClient): AbortController {
  const stop = new AbortController();
  void client
    .request(
      {
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true } },
      } as unknown as Parameters<DualEraClient["request"]>[0],
      z.looseObject({}),
      { signal: stop.signal, timeout: LISTEN_TIMEOUT_MS },
    )
    .catch(() => {});
  return stop;
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
 * Shuts one server down without throwing: ends a modern subscription and a legacy HTTP session
 * (unless `terminate` is false: the server already ended it), closes the client (for stdio the
 * SDK closes stdin, then SIGTERMs, then SIGKILLs its child), then kills whatever of the child's
 * process tree is still running — a launcher's grandchild the SDK never knew about included.
 */
async function closeQuietly(
  client: DualEraClient,
  opened: McpTransport,
  how: { terminate?: boolean; listen?: AbortController | undefined } = {},
): Promise<void> {
  how.listen?.abort();
  const rootPid = opened.pid();
  const tree = rootPid === null ? [] : [rootPid, ...(await listDescendants(rootPid))];
  if (opened.kind === "http" && how.terminate !== false) {
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
