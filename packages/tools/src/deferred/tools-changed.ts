import { z } from "zod";

/**
 * The `extension` domain of the log entry that records an MCP server's changed tool list
 * (docs/tools-deferred.md, "When a server's tools change"). Additive in session format 3.
 */
export const MCP_TOOLS_CHANGED_DOMAIN = "mcp.tools_changed";

/**
 * The payload of an `mcp.tools_changed` entry: the server, the tool names (as the model sees them)
 * added, removed and changed since its last list, and whether the change reached the model's
 * tools — `applied` only for a deferred server reached through `find_tools`/`call_tool`; the
 * tools array itself never changes.
 */
export const mcpToolsChangedSchema = z.strictObject({
  server: z.string().min(1),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  applied: z.boolean(),
});

/** An MCP server's changed tool list, as the pod logs it and tells the model. */
export type McpToolsChanged = z.infer<typeof mcpToolsChangedSchema>;
