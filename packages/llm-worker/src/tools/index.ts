export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDenial,
  type ToolFactory,
  type ToolOutput,
} from "./tool.js";
export { DEFAULT_TOOL_OUTPUT_LIMITS, type ToolOutputLimits, ToolServer } from "./tool-server.js";
