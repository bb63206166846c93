import type { Tool, ToolFactory } from "@podkit/llm-worker";
import type { McpServerSpec } from "../mcp/server-config.js";
import type { FileTracking } from "./file-tracking.js";

/**
 * The MCP package's factories with every call of a stdio server's tool that may change things
 * (no `readOnlyHint`) going through `files.around`: such a server runs on this machine, in the
 * pod's sandbox, so what it writes under the writable roots is found by the same scan as a
 * command's. An HTTP server's tools are left alone (its writes, if any, happen elsewhere).
 */
export function trackStdioServers(
  factories: readonly ToolFactory[],
  servers: readonly McpServerSpec[],
  files: FileTracking,
): ToolFactory[] {
  const tracked = stdioToolTracking(servers, files);
  if (tracked === undefined) return [...factories];
  return factories.map((factory) => async () => {
    const made = await factory();
    const tools: readonly Tool[] = Array.isArray(made) ? made : [made as Tool];
    return tools.map(tracked);
  });
}

/**
 * The wrapper `trackStdioServers` puts on each tool (also for a server's changed tool list), or
 * undefined when no server runs over stdio.
 */
export function stdioToolTracking(
  servers: readonly McpServerSpec[],
  files: FileTracking,
): ((tool: Tool) => Tool) | undefined {
  const prefixes = servers
    .filter((server) => server.command !== undefined)
    .map((server) => `mcp__${server.name}__`);
  if (prefixes.length === 0) return undefined;
  return (tool) =>
    tool.readOnly === true || !prefixes.some((prefix) => tool.name.startsWith(prefix))
      ? tool
      : { ...tool, execute: (args, ctx) => files.around(async () => tool.execute(args, ctx), ctx.signal) };
}
