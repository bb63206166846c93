export { ERROR_KINDS, type ErrorKind } from "./error-kinds.js";
export { ListenError, OptionsError, RecordingError, ScriptError, TestkitError } from "./errors.js";
export type { McpDoubleTool } from "./mcp/generated-tools.js";
export type { McpDoubleCall, McpDoubleEra } from "./mcp/mcp-double-core.js";
export {
  type McpDoubleRequest,
  type McpServerDouble,
  type McpServerDoubleOptions,
  startMcpServerDouble,
} from "./mcp/mcp-server-double.js";
export { type McpDoubleCommand, mcpServerDoubleCommand } from "./mcp/mcp-stdio-command.js";
export type { McpStdioDoubleOptions } from "./mcp/mcp-stdio-double.js";
export type { PromptCacheReport, PromptCacheRequestReport } from "./prompt-cache/report.js";
export { simulatePromptCache } from "./prompt-cache/simulate-prompt-cache.js";
export { loadRecordedChunks, RECORDINGS_DIR } from "./recordings.js";
export {
  NO_RESPONSE_LEFT,
  type ProviderDouble,
  type ProviderDoubleOptions,
  startProviderDouble,
} from "./server/provider-double.js";
export type {
  CapturedRequest,
  Fault,
  ScriptedFinishReason,
  ScriptedPart,
  ScriptedResponse,
  ScriptedUsage,
  Wire,
} from "./types.js";
export { type RequestMediaBlock, requestMedia } from "./wire/request-media.js";
