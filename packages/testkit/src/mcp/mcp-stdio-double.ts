import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import {
  ERRORS,
  type JsonRpcId,
  McpDoubleCore,
  type McpDoubleCoreOptions,
  MODERN_VERSION,
  modernVersionOf,
} from "./mcp-double-core.js";

/** Options of the stdio double (`mcpServerDoubleCommand`). */
export interface McpStdioDoubleOptions extends McpDoubleCoreOptions {
  /** A file every received `tools/call` is appended to, one JSON object a line (`McpDoubleCall`). */
  callLog?: string;
}

/**
 * Serves the MCP double over this process's stdin and stdout, one JSON-RPC message a line, in the
 * era(s) `options.era` says: a modern request (`_meta` names 2026-07-28) is answered statelessly,
 * `subscriptions/listen` acknowledged and kept open; `initialize` starts the legacy protocol,
 * after which a changed list is announced with `notifications/tools/list_changed`.
 */
export function serveStdioDouble(options: McpStdioDoubleOptions): void {
  const core = new McpDoubleCore(options);
  const write = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
  let legacyStarted = false;
  const listens = new Set<JsonRpcId>();
  core.onToolsChanged = () => {
    if (legacyStarted) write({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    for (const id of listens) {
      write({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: { "io.modelcontextprotocol/subscriptionId": id } },
      });
    }
  };
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    let message: { id?: JsonRpcId; method?: string; params?: Record<string, unknown> };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      write({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      return;
    }
    const method = String(message.method ?? "");
    const params = message.params ?? {};
    if (message.id === undefined) {
      if (method === "notifications/cancelled") listens.delete(params.requestId as JsonRpcId);
      return;
    }
    const id = message.id;
    const version = modernVersionOf(params);
    if (version !== undefined && core.era !== "legacy") {
      if (version !== MODERN_VERSION) {
        write({
          jsonrpc: "2.0",
          id,
          error: {
            code: ERRORS.unsupportedVersion,
            message: "Unsupported protocol version",
            data: { supported: core.supportedVersions, requested: version },
          },
        });
        return;
      }
      if (method === "subscriptions/listen") {
        listens.add(id);
        write({
          jsonrpc: "2.0",
          method: "notifications/subscriptions/acknowledged",
          params: {
            _meta: { "io.modelcontextprotocol/subscriptionId": id },
            notifications: { toolsListChanged: true },
          },
        });
        return;
      }
      write({ jsonrpc: "2.0", id, ...core.answer(method, params, "modern") });
      if (method === "tools/call" && options.callLog !== undefined) logCall(options.callLog, core);
      return;
    }
    if (method === "initialize" && core.era === "modern") {
      write({
        jsonrpc: "2.0",
        id,
        error: {
          code: ERRORS.unsupportedVersion,
          message: `Unsupported protocol version: this server speaks ${MODERN_VERSION} only`,
          data: { supported: core.supportedVersions, requested: params.protocolVersion },
        },
      });
      return;
    }
    if (method === "initialize") legacyStarted = true;
    write({ jsonrpc: "2.0", id, ...core.answer(method, params, "legacy") });
    if (method === "tools/call" && options.callLog !== undefined) logCall(options.callLog, core);
  });
  lines.on("close", () => process.exit(0));
}

function logCall(file: string, core: McpDoubleCore): void {
  const call = core.calls.at(-1);
  if (call !== undefined) appendFileSync(file, `${JSON.stringify(call)}\n`);
}
