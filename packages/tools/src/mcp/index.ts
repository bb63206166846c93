export { McpConfigError } from "./errors.js";
export {
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  DEFAULT_MCP_CONNECT_TIMEOUT_MS,
  type McpToolPackageOptions,
  mcpToolPackage,
} from "./mcp-tool-package.js";
export { mcpToolName } from "./mcp-tools.js";
export type { McpServerSpec } from "./server-config.js";
