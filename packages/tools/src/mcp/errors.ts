import { hasMarker, ToolsError } from "../errors.js";

const CONFIG_MARKER = Symbol.for("podkit.tools.error.mcp-config");

/**
 * An `[[mcp.server]]` entry handed to `mcpToolPackage` that cannot describe a server (neither or
 * both of `command` and `url`, a bad URL, a bad timeout). Thrown when the package is built, before
 * anything is started, so a pod never comes up half-configured.
 */
export class McpConfigError extends ToolsError {
  readonly [CONFIG_MARKER] = true;
  /** The server's `name` (or its position, `mcp.server[<i>]`, when the name itself is missing). */
  readonly server: string;

  constructor(args: { server: string; problem: string }) {
    super(`[[mcp.server]] "${args.server}": ${args.problem}`);
    this.name = "McpConfigError";
    this.server = args.server;
  }

  /** True for an `McpConfigError` from any copy of `@podkit/tools`. */
  static override isInstance(value: unknown): value is McpConfigError {
    return hasMarker(value, CONFIG_MARKER);
  }
}
