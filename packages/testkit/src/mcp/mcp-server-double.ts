import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ListenError, OptionsError } from "../errors.js";
import {
  ERRORS,
  type JsonRpcId,
  MCP_DOUBLE_ERAS,
  type McpDoubleCall,
  McpDoubleCore,
  type McpDoubleCoreOptions,
  MODERN_VERSION,
  modernVersionOf,
} from "./mcp-double-core.js";

/** Options of `startMcpServerDouble`. */
export interface McpServerDoubleOptions extends McpDoubleCoreOptions {
  /** Port on 127.0.0.1 (default: any free one). */
  port?: number;
}

/** One HTTP request the double received (notifications and stream opens included). */
export interface McpDoubleRequest {
  readonly httpMethod: string;
  /** The JSON-RPC method ("" for a GET or DELETE). */
  method: string;
  era: "legacy" | "modern";
  /** Request headers, lower-case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The HTTP status the double answered with. */
  status: number;
}

/** A running MCP server double over Streamable HTTP. */
export interface McpServerDouble {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** Every `tools/call` received, in order. */
  readonly calls: readonly McpDoubleCall[];
  /** Every HTTP request received, in order. */
  readonly requests: readonly McpDoubleRequest[];
  /** The names the server lists now. */
  toolNames(): string[];
  /**
   * Changes the tool list (adds `added_tool_<n>`, gives the first tool another argument) and says so:
   * `notifications/tools/list_changed` on every legacy session's GET stream and every modern
   * `subscriptions/listen` stream.
   */
  changeTools(): void;
  /** Forgets every legacy session: a request naming one gets HTTP 404, as from a restarted server. */
  expireSessions(): void;
  /** How many legacy sessions were opened (`initialize`) so far. */
  sessionsOpened(): number;
  close(): Promise<void>;
}

/**
 * Starts an MCP server on 127.0.0.1 that offers `tools` generated tools (default 200) over
 * Streamable HTTP, in the protocol era(s) `era` says: the 2026-07-28 stateless revision (per-request
 * `_meta`, the mirrored `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers checked,
 * `server/discover`, `subscriptions/listen`), the legacy handshake with `Mcp-Session-Id` sessions
 * (a GET stream for notifications; an unknown session gets 404), or both. No SDK: every byte on
 * the wire is written here, so a client's protocol handling is what is tested.
 */
export async function startMcpServerDouble(options: McpServerDoubleOptions = {}): Promise<McpServerDouble> {
  checkOptions(options, "startMcpServerDouble");
  const core = new McpDoubleCore(options);
  const requests: McpDoubleRequest[] = [];
  const sessions = new Set<string>();
  let opened = 0;
  const sessionStreams = new Map<string, Set<ServerResponse>>();
  const listenStreams = new Map<ServerResponse, JsonRpcId>();
  const sockets = new Set<Socket>();

  core.onToolsChanged = () => {
    for (const streams of sessionStreams.values()) {
      for (const res of streams) sse(res, { jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    }
    for (const [res, id] of listenStreams) {
      sse(res, {
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: { "io.modelcontextprotocol/subscriptionId": id } },
      });
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
    );
    const record: McpDoubleRequest = {
      httpMethod: req.method ?? "",
      method: "",
      era: "legacy",
      headers,
      status: 0,
    };
    requests.push(record);
    const reply = (status: number, body?: unknown, extra: Record<string, string> = {}) => {
      record.status = status;
      res.writeHead(status, body === undefined ? extra : { "content-type": "application/json", ...extra });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const session = headers["mcp-session-id"];
    if (req.method === "GET") {
      if (core.era === "modern") return reply(405);
      if (session === undefined || !sessions.has(session)) return reply(session === undefined ? 400 : 404);
      record.status = 200;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(": open\n\n");
      const streams = sessionStreams.get(session) ?? new Set();
      streams.add(res);
      sessionStreams.set(session, streams);
      res.on("close", () => streams.delete(res));
      return;
    }
    if (req.method === "DELETE") {
      if (session === undefined || !sessions.delete(session)) return reply(404);
      return reply(200);
    }
    if (req.method !== "POST") return reply(405);
    let message: { id?: JsonRpcId; method?: string; params?: Record<string, unknown> };
    try {
      message = JSON.parse(await readBody(req)) as typeof message;
    } catch {
      return reply(400, rpcError(null, -32700, "Parse error"));
    }
    const method = String(message.method ?? "");
    const params = message.params ?? {};
    const id = message.id ?? null;
    record.method = method;
    // A notification is taken in either era (cancellations, `initialized`).
    if (message.id === undefined) return reply(202);
    const version = modernVersionOf(params);
    if (version !== undefined) {
      record.era = "modern";
      // A legacy-only server knows nothing of `_meta`: a request outside a session is refused.
      if (core.era === "legacy")
        return reply(400, rpcError(id, -32000, "Bad Request: Server not initialized"));
      if (version !== MODERN_VERSION) {
        return reply(
          400,
          rpcError(id, ERRORS.unsupportedVersion, "Unsupported protocol version", {
            supported: core.supportedVersions,
            requested: version,
          }),
        );
      }
      const mismatch = headerMismatch(headers, version, method, params);
      if (mismatch !== undefined) return reply(400, rpcError(id, ERRORS.headerMismatch, mismatch));
      if (method === "subscriptions/listen") {
        record.status = 200;
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        sse(res, {
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: {
            _meta: { "io.modelcontextprotocol/subscriptionId": id },
            notifications: { toolsListChanged: true },
          },
        });
        listenStreams.set(res, id as JsonRpcId);
        res.on("close", () => listenStreams.delete(res));
        return;
      }
      const outcome = core.answer(method, params, "modern");
      return reply("error" in outcome && outcome.error.code === ERRORS.methodNotFound ? 404 : 200, {
        jsonrpc: "2.0",
        id,
        ...outcome,
      });
    }
    if (method === "initialize") {
      if (core.era === "modern") {
        return reply(
          400,
          rpcError(
            id,
            ERRORS.unsupportedVersion,
            `Unsupported protocol version: this server speaks ${MODERN_VERSION} only`,
            {
              supported: core.supportedVersions,
              requested: params.protocolVersion,
            },
          ),
        );
      }
      const created = randomUUID();
      sessions.add(created);
      opened += 1;
      return reply(
        200,
        { jsonrpc: "2.0", id, ...core.answer(method, params, "legacy") },
        { "mcp-session-id": created },
      );
    }
    if (session === undefined)
      return reply(400, rpcError(id, -32000, "Bad Request: No valid session ID provided"));
    if (!sessions.has(session)) return reply(404, rpcError(id, -32001, "Session not found"));
    return reply(200, { jsonrpc: "2.0", id, ...core.answer(method, params, "legacy") });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        new ListenError(
          `MCP server double could not listen on 127.0.0.1:${options.port ?? 0}: ${error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: core.calls,
    requests,
    toolNames: () => core.tools.map((tool) => tool.name),
    changeTools: () => core.changeTools(),
    expireSessions: () => {
      sessions.clear();
      for (const streams of sessionStreams.values()) for (const res of streams) res.end();
      sessionStreams.clear();
    },
    sessionsOpened: () => opened,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Throws `OptionsError` for options no double can serve. */
export function checkOptions(options: McpDoubleCoreOptions, caller: string): void {
  if (typeof options !== "object" || options === null)
    throw new OptionsError(`${caller}: pass an options object`);
  if (options.tools !== undefined && (!Number.isSafeInteger(options.tools) || options.tools < 0)) {
    throw new OptionsError(
      `${caller}: tools must be a whole number ≥ 0, got ${JSON.stringify(options.tools)}`,
    );
  }
  if (options.era !== undefined && !MCP_DOUBLE_ERAS.includes(options.era)) {
    throw new OptionsError(
      `${caller}: era must be one of ${MCP_DOUBLE_ERAS.join(", ")}, got ${JSON.stringify(options.era)}`,
    );
  }
  if (options.pageSize !== undefined && (!Number.isSafeInteger(options.pageSize) || options.pageSize < 1)) {
    throw new OptionsError(
      `${caller}: pageSize must be a whole number ≥ 1, got ${JSON.stringify(options.pageSize)}`,
    );
  }
}

/** The 2026-07-28 header checks: version, method and (for a call) the name mirror the body. */
function headerMismatch(
  headers: Record<string, string>,
  version: string,
  method: string,
  params: Record<string, unknown>,
): string | undefined {
  if (headers["mcp-protocol-version"] !== version) {
    return `Header mismatch: MCP-Protocol-Version is ${JSON.stringify(headers["mcp-protocol-version"] ?? null)}, the body says ${version}`;
  }
  if (headers["mcp-method"] !== method) {
    return `Header mismatch: Mcp-Method is ${JSON.stringify(headers["mcp-method"] ?? null)}, the body says ${method}`;
  }
  if (method === "tools/call") {
    const sent = decodeHeader(headers["mcp-name"]);
    if (sent !== params.name) {
      return `Header mismatch: Mcp-Name is ${JSON.stringify(sent ?? null)}, the body says ${String(params.name)}`;
    }
  }
  return undefined;
}

function decodeHeader(value: string | undefined): string | undefined {
  const encoded = value === undefined ? undefined : /^=\?base64\?(.*)\?=$/.exec(value)?.[1];
  return encoded === undefined ? value : Buffer.from(encoded, "base64").toString("utf8");
}

function rpcError(id: JsonRpcId | null, code: number, message: string, data?: unknown) {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

function sse(res: ServerResponse, message: unknown): void {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
