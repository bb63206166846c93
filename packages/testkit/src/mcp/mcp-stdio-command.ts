import { fileURLToPath } from "node:url";
import { checkOptions } from "./mcp-server-double.js";
import type { McpStdioDoubleOptions } from "./mcp-stdio-double.js";

/** How to start the stdio MCP server double: a `[[mcp.server]]`'s `command` and `args`. */
export interface McpDoubleCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The command line of an MCP server double over stdio, with `options` (`tools`, `era`,
 * `changeToolsOnCall`, `callLog`, `pageSize`): put `command` and `args` in an `[[mcp.server]]`
 * entry or `mcpToolPackage`. It runs this Node with the double's script, so it needs nothing on PATH.
 */
export function mcpServerDoubleCommand(options: McpStdioDoubleOptions = {}): McpDoubleCommand {
  checkOptions(options, "mcpServerDoubleCommand");
  return {
    command: process.execPath,
    args: [fileURLToPath(new URL("./mcp-stdio-main.js", import.meta.url)), JSON.stringify(options)],
  };
}
