import type { ToolServer } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { CorruptEntryError, describeSession, lineOf, type Store } from "@podkit/session-store";
import { z } from "zod";
import { canonicalJson } from "../context/context-key.js";

/**
 * The `extension` domain that records the tools each `[[mcp.server]]` offered the model: their
 * names, descriptions and input schemas as they were sent. The rest of a request's prefix is in
 * the log already (the system prompt, and every builtin or package tool can be made again from
 * the manifest); an MCP server's list is not, so an eval can replay its calls without starting
 * it (docs/evals.md). Additive within format v3.
 */
export const MCP_TOOLS_DOMAIN = "mcp.tools";

/** One tool as the model was offered it. */
const RecordedMcpToolSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  read_only: z.boolean().optional(),
  /** Offered deferred (docs/tools-deferred.md): an eval starts such a server rather than replay its record. */
  deferred: z.boolean().optional(),
});

/** The payload of an `mcp.tools` entry: each server's tools (none for a server that did not start). */
export const McpToolsRecordSchema = z.object({
  servers: z.array(z.object({ name: z.string().min(1), tools: z.array(RecordedMcpToolSchema) })),
});

export type RecordedMcpTool = z.infer<typeof RecordedMcpToolSchema>;
export type McpToolsRecord = z.infer<typeof McpToolsRecordSchema>;

/** The prefix of server `server`'s tool names (a server name is letters, digits, `_` and `-`). */
export function mcpToolPrefix(server: string): string {
  return `mcp__${server}__`;
}

/**
 * The record of what `[[mcp.server]]` entries offered, from a flushed tool server; undefined for
 * a manifest without servers. A tool belongs to the server with the longest matching prefix.
 */
export function mcpToolsRecord(loaded: LoadedManifest, tools: ToolServer): McpToolsRecord | undefined {
  const servers = loaded.manifest.mcp.server.map((server) => server.name);
  if (servers.length === 0) return undefined;
  const byServer = new Map<string, RecordedMcpTool[]>(servers.map((name) => [name, []]));
  for (const definition of tools.definitions()) {
    const owner = servers
      .filter((server) => definition.name.startsWith(mcpToolPrefix(server)))
      .sort((a, b) => b.length - a.length)[0];
    if (owner === undefined) continue;
    byServer.get(owner)?.push({
      name: definition.name,
      description: definition.description ?? "",
      input_schema: definition.inputSchema as Record<string, unknown>,
      ...(tools.isReadOnly(definition.name) ? { read_only: true } : {}),
      ...(tools.isDeferred(definition.name) ? { deferred: true } : {}),
    });
  }
  return { servers: [...byServer].map(([name, list]) => ({ name, tools: list })) };
}

/** True when `recorded` (the folded state of the domain, untrusted) already says what `current` says. */
export function sameMcpToolsRecord(recorded: unknown, current: McpToolsRecord): boolean {
  return recorded !== undefined && canonicalJson(recorded) === canonicalJson(current);
}

/**
 * The MCP tools session `sessionId` recorded on its line of work (through compactions and forks),
 * the latest record winning; undefined when it recorded none (a session without servers, or one
 * written before podkit recorded them). What the log says is untrusted: a payload of the wrong
 * shape counts as none, and a corrupt line ends the reading of its segment.
 */
export async function readRecordedMcpTools(
  store: Store,
  sessionId: string,
): Promise<McpToolsRecord | undefined> {
  const overview = await describeSession(store, sessionId);
  let found: McpToolsRecord | undefined;
  for (const segmentId of lineOf(overview)) {
    try {
      for await (const entry of store.readAll({ sessionId, segmentId })) {
        if (entry.kind !== "extension" || entry.domain !== MCP_TOOLS_DOMAIN) continue;
        const parsed = McpToolsRecordSchema.safeParse(entry.payload);
        if (parsed.success) found = parsed.data;
      }
    } catch (error) {
      if (!CorruptEntryError.isInstance(error)) throw error;
    }
  }
  return found;
}
