import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { type Tool, ToolServer } from "@podkit/llm-worker";
import type { ToolWarningSink } from "../package/tool-package.js";
import type { McpConnection } from "./mcp-connection.js";

/** The longest tool name every supported provider accepts (OpenAI's limit). */
const MAX_TOOL_NAME = 64;

/** Characters providers accept in a tool name; anything else in an MCP name becomes "_". */
function providerSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** `mcp__<server>__<tool>`, the name the model sees. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${providerSafe(server)}__${providerSafe(tool)}`;
}

/**
 * Whether the worker will accept this tool's input schema. It is compiled exactly as the pod's
 * tool server will compile it, so one unusable schema drops one tool with a warning instead of
 * failing the pod's whole `flushPending()`.
 */
async function schemaProblem(tool: Tool): Promise<string | undefined> {
  const probe = new ToolServer();
  probe.registerTool(tool);
  try {
    await probe.flushPending();
    return undefined;
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error instanceof Error ? error.message : String(error)}${cause}`;
  }
}

/**
 * The worker tools for what one server listed: named `mcp__<server>__<tool>`, described and
 * validated by the server's own description and JSON Schema, each call going to the server with
 * the per-call timeout. A tool whose name or schema cannot be offered is skipped with a warning.
 */
export async function toWorkerTools(
  connection: McpConnection,
  listed: readonly McpTool[],
  options: { timeoutMs: number; warn: ToolWarningSink },
): Promise<Tool[]> {
  const source = `mcp:${connection.server}`;
  const byName = new Map<string, Tool>();
  for (const listedTool of listed) {
    const name = mcpToolName(connection.server, listedTool.name);
    const skip = (why: string) =>
      options.warn({
        code: "mcp.tool_skipped",
        source,
        message: `MCP server "${connection.server}" tool "${listedTool.name}" is not offered to the model: ${why}`,
      });
    if (name.length > MAX_TOOL_NAME) {
      skip(`its name "${name}" is longer than ${MAX_TOOL_NAME} characters; give the server a shorter name`);
      continue;
    }
    if (byName.has(name)) {
      skip(`another tool of the server already maps to "${name}"`);
      continue;
    }
    const tool: Tool = {
      name,
      description:
        listedTool.description ??
        listedTool.title ??
        `Tool "${listedTool.name}" of MCP server "${connection.server}".`,
      inputSchema: { ...listedTool.inputSchema } as Tool["inputSchema"],
      // The server's own word (MCP `annotations.readOnlyHint`); a stdio server also runs in the
      // pod's sandbox, so in `read_only` mode its writes fail there too.
      ...(listedTool.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
      execute: (args, ctx) => connection.call(listedTool, name, args, ctx.signal, options.timeoutMs),
    };
    const problem = await schemaProblem(tool);
    if (problem !== undefined) {
      skip(`its input schema cannot be used (${problem})`);
      continue;
    }
    byName.set(name, tool);
  }
  return [...byName.values()];
}
