import type { Tool, ToolOutput, ToolServer } from "@podkit/llm-worker";
import { CALL_TOOL, FIND_TOOLS, innerCallOf } from "./deferred-call.js";
import { closestNames, rankTools } from "./rank-tools.js";

/** The pair's descriptions: the pod's prompt catalog has them (`find_tools_description`, …). */
export interface DeferredPairDescriptions {
  readonly findTools: string;
  readonly callTool: string;
}

/** How many tools `find_tools` returns unless asked for another number, and at most. */
export const FIND_TOOLS_DEFAULT_LIMIT = 5;
export const FIND_TOOLS_MAX_LIMIT = 20;

const FIND_TOOLS_SCHEMA: Tool["inputSchema"] = {
  type: "object",
  properties: {
    query: { type: "string", minLength: 1 },
    limit: { type: "integer", minimum: 1, maximum: FIND_TOOLS_MAX_LIMIT },
  },
  required: ["query"],
  additionalProperties: false,
};

const CALL_TOOL_SCHEMA: Tool["inputSchema"] = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1 },
    arguments: { type: "object" },
  },
  required: ["name"],
  additionalProperties: false,
};

/**
 * `find_tools(query, limit?)` and `call_tool(name, arguments)`: how a model whose provider has no
 * native tool search reaches the deferred tools of `server` (docs/tools-deferred.md). The pair is
 * on the tools array from the session's first request, so the array never changes. `find_tools`
 * ranks the deferred tools' names and descriptions (`rankTools`) and returns the full definitions
 * of the best in its result, which the log keeps like every result. `call_tool` runs the named
 * deferred tool through `server`, which validates the arguments against that tool's schema as for
 * a direct call: an unknown name or invalid arguments come back as an error result.
 */
export function deferredPair(server: ToolServer, descriptions: DeferredPairDescriptions): Tool[] {
  const findTools: Tool<{ query: string; limit?: number }> = {
    name: FIND_TOOLS,
    description: descriptions.findTools,
    inputSchema: FIND_TOOLS_SCHEMA,
    readOnly: true,
    execute({ query, limit }) {
      const deferred = server.deferredDefinitions();
      const found = rankTools(deferred, query).slice(0, limit ?? FIND_TOOLS_DEFAULT_LIMIT);
      if (found.length === 0) {
        return {
          summary: `no deferred tool matches "${query}" (${deferred.length} deferred tools); try other words, e.g. what the tool acts on or does`,
        };
      }
      const definitions = found.map((tool) => ({
        name: tool.name,
        description: tool.description ?? "",
        input_schema: tool.inputSchema,
      }));
      return {
        summary: `${found.length} of ${deferred.length} deferred tools match "${query}": ${found.map((tool) => tool.name).join(", ")}. Call one with ${CALL_TOOL} and arguments that match its input_schema.`,
        content: JSON.stringify(definitions, null, 1),
      };
    },
  };
  const callTool: Tool<{ name: string; arguments?: Record<string, unknown> }> = {
    name: CALL_TOOL,
    description: descriptions.callTool,
    inputSchema: CALL_TOOL_SCHEMA,
    async execute(args, { signal, callId }): Promise<ToolOutput> {
      const inner = innerCallOf(args);
      if (inner === undefined) return { summary: `${CALL_TOOL} needs a tool name`, is_error: true };
      if (!server.isDeferred(inner.name)) return notDeferred(server, inner.name);
      const output = await server.executeUncapped(
        { type: "tool_call", call_id: callId, name: inner.name, arguments: inner.arguments },
        signal,
      );
      // The inner tool's own output cap applies (`[worker.tool_output] per_tool`), then call_tool's.
      const { summary: _summary, content: _content, is_error: _isError, ...rest } = output;
      return { ...rest, ...server.cap(inner.name, output) };
    },
  };
  return [findTools, callTool];
}

function notDeferred(server: ToolServer, name: string): ToolOutput {
  if (server.names().includes(name) && name !== CALL_TOOL && name !== FIND_TOOLS) {
    return {
      summary: `"${name}" is on your tool list: call it directly, not through ${CALL_TOOL}`,
      is_error: true,
    };
  }
  const deferred = server.deferredDefinitions().map((tool) => tool.name);
  const near = closestNames(name, deferred);
  return {
    summary: `no deferred tool is named "${name}"${near.length > 0 ? ` (close: ${near.join(", ")})` : ""}; use ${FIND_TOOLS} to find the tool and its exact name`,
    is_error: true,
  };
}
