import { generatedTools, type McpDoubleTool } from "./generated-tools.js";

/** The stateless revision the double speaks besides the legacy ones. */
export const MODERN_VERSION = "2026-07-28";
/** The handshake-based revisions the double accepts in `initialize`, newest first. */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;

/** Which protocol a server double speaks (docs/testkit.md, "MCP server double"). */
export type McpDoubleEra = "legacy" | "modern" | "dual";
export const MCP_DOUBLE_ERAS: readonly McpDoubleEra[] = ["legacy", "modern", "dual"];

/** Options shared by the HTTP and the stdio double. */
export interface McpDoubleCoreOptions {
  /** How many generated tools the server lists (default 200; see `generatedTools`). */
  tools?: number;
  /** `legacy` (initialize; HTTP sessions), `modern` (2026-07-28 only) or `dual` (both; default). */
  era?: McpDoubleEra;
  /** A tool whose call, once answered, changes the tool list (`changeTools`): how a stdio test triggers it. */
  changeToolsOnCall?: string;
  /** Tools/list page size (default 100), so a client has to follow `nextCursor`. */
  pageSize?: number;
}

/** One `tools/call` the double received. */
export interface McpDoubleCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  /** The protocol the call came in. */
  readonly era: "legacy" | "modern";
}

export type JsonRpcId = string | number;
export type Outcome =
  | { result: Record<string, unknown> }
  | { error: { code: number; message: string; data?: unknown } };

/** The JSON-RPC error codes the double answers with. */
export const ERRORS = {
  methodNotFound: -32601,
  invalidParams: -32602,
  headerMismatch: -32020,
  unsupportedVersion: -32022,
} as const;

/**
 * What an MCP server double knows, whatever the transport: its tool list (generated, changed by
 * `changeTools`), the calls it received, and the answers to each method in either era.
 */
export class McpDoubleCore {
  readonly era: McpDoubleEra;
  readonly calls: McpDoubleCall[] = [];
  private list: McpDoubleTool[];
  private changes = 0;
  private readonly pageSize: number;
  private readonly changeOnCall: string | undefined;
  /** Called after the list changed, for the transport to notify whoever listens. */
  onToolsChanged: () => void = () => {};

  constructor(options: McpDoubleCoreOptions) {
    this.era = options.era ?? "dual";
    this.list = generatedTools(options.tools ?? 200);
    this.pageSize = options.pageSize ?? 100;
    this.changeOnCall = options.changeToolsOnCall;
  }

  get tools(): readonly McpDoubleTool[] {
    return this.list;
  }

  /** The versions the double names in `server/discover` and in version errors. */
  get supportedVersions(): string[] {
    if (this.era === "modern") return [MODERN_VERSION];
    if (this.era === "legacy") return [...LEGACY_VERSIONS];
    return [MODERN_VERSION, ...LEGACY_VERSIONS];
  }

  /**
   * Changes the tool list the way a server updated while running does: adds `added_tool_<n>` and
   * gives the first tool another optional argument, then notifies (`onToolsChanged`).
   */
  changeTools(): void {
    this.changes += 1;
    const n = this.changes;
    const [first, ...rest] = this.list;
    const changedFirst: McpDoubleTool[] =
      first === undefined
        ? []
        : [
            {
              ...first,
              inputSchema: {
                ...first.inputSchema,
                properties: { ...first.inputSchema.properties, [`note_${n}`]: { type: "string" } },
              },
            },
          ];
    this.list = [
      ...changedFirst,
      ...rest,
      {
        name: `added_tool_${n}`,
        description: `Summarize a week of team activity into a digest (added while running, change ${n}).`,
        inputSchema: { type: "object", properties: { week: { type: "string" } }, required: ["week"] },
        annotations: { readOnlyHint: true },
      },
    ];
    this.onToolsChanged();
  }

  /** The answer to one request in `era` (undefined: none, e.g. `subscriptions/listen`, which the transport keeps open). */
  answer(method: string, params: Record<string, unknown>, era: "legacy" | "modern"): Outcome {
    const complete = (result: Record<string, unknown>): Outcome => ({
      result: era === "modern" ? { resultType: "complete", ...result } : result,
    });
    switch (method) {
      case "server/discover":
        if (era !== "modern") return { error: { code: ERRORS.methodNotFound, message: "Method not found" } };
        return complete({
          supportedVersions: this.supportedVersions,
          capabilities: { tools: { listChanged: true } },
          _meta: { "io.modelcontextprotocol/serverInfo": { name: "podkit-mcp-double", version: "1" } },
          ttlMs: 0,
          cacheScope: "private",
        });
      case "initialize": {
        const requested = String(params.protocolVersion ?? "");
        const version = (LEGACY_VERSIONS as readonly string[]).includes(requested)
          ? requested
          : LEGACY_VERSIONS[0];
        return {
          result: {
            protocolVersion: version,
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: "podkit-mcp-double", version: "1" },
          },
        };
      }
      case "ping":
        return { result: {} };
      case "tools/list": {
        const start = Number(params.cursor ?? 0) || 0;
        const page = this.list.slice(start, start + this.pageSize);
        const next = start + this.pageSize < this.list.length ? String(start + this.pageSize) : undefined;
        return complete({
          tools: structuredClone(page),
          ...(next === undefined ? {} : { nextCursor: next }),
          ...(era === "modern" ? { ttlMs: 0, cacheScope: "private" } : {}),
        });
      }
      case "tools/call": {
        const name = String(params.name ?? "");
        const tool = this.list.find((t) => t.name === name);
        if (tool === undefined)
          return { error: { code: ERRORS.invalidParams, message: `Unknown tool: ${name}` } };
        const args = (params.arguments ?? {}) as Record<string, unknown>;
        this.calls.push({ name, arguments: args, era });
        if (name === this.changeOnCall) queueMicrotask(() => this.changeTools());
        return complete({ content: [{ type: "text", text: `${name}: done ${JSON.stringify(args)}` }] });
      }
      default:
        return { error: { code: ERRORS.methodNotFound, message: `Method not found: ${method}` } };
    }
  }
}

/** The version a modern request's `_meta` names, or undefined for a legacy request. */
export function modernVersionOf(params: unknown): string | undefined {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const version = meta?.["io.modelcontextprotocol/protocolVersion"];
  return typeof version === "string" ? version : undefined;
}
