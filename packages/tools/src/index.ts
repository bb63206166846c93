// What apps, the pod and tool-package authors call; pinned by test/public-surface.test.ts.

export type { ErrorKind } from "@podkit/llm-worker";
export { escalationReason } from "./bash/escalation.js";
export { builtinToolPackage } from "./builtin/builtin-package.js";
export { CALL_TOOL, deferredCallOf, FIND_TOOLS } from "./deferred/deferred-call.js";
export type { DeferredPairDescriptions } from "./deferred/deferred-pair.js";
export type { DeferralDecision } from "./deferred/tool-deferral.js";
export {
  MCP_TOOLS_CHANGED_DOMAIN,
  type McpToolsChanged,
  mcpToolsChangedSchema,
} from "./deferred/tools-changed.js";
export {
  ToolPackageExportError,
  type ToolPackageLocation,
  ToolPackageNotFoundError,
  ToolsError,
} from "./errors.js";
export { type LoadToolPackagesOptions, loadToolPackages, type ToolSet } from "./load/load-tool-packages.js";
export { McpConfigError } from "./mcp/errors.js";
export { type McpToolPackageOptions, type McpToolsChange, mcpToolPackage } from "./mcp/mcp-tool-package.js";
export type { McpServerSpec } from "./mcp/server-config.js";
export type {
  Guardrail,
  GuardrailCall,
  GuardrailContext,
  GuardrailOutcome,
  PackageGuardrail,
} from "./package/guardrail.js";
export {
  type BlobWriter,
  type DefinedToolPackage,
  definePodkitToolPackage,
  type PodkitToolPackage,
  type ToolPackageContext,
  type ToolWarning,
  type ToolWarningSink,
} from "./package/tool-package.js";
export type { BackendProbe, NetworkBridge, SandboxBackend, SandboxPolicy } from "./sandbox/backend.js";
export { SandboxUnavailableError } from "./sandbox/errors.js";
export { type CreateSandboxOptions, createSandbox, type PodSandbox } from "./sandbox/pod-sandbox.js";
export {
  type EscalationOutcome,
  SANDBOX_PROBE_DOMAIN,
  type SandboxCommand,
  type SandboxProbe,
  type SandboxSpawnOptions,
  type ToolSandbox,
  type WrappedCommand,
} from "./sandbox/sandbox.js";
export type { FileTracking } from "./tracking/file-tracking.js";
export {
  FILES_CHANGED_DOMAIN,
  type FileChange,
  type FilesChanged,
  filesChangedSchema,
  isWorkspacePath,
  parseFilesChanged,
} from "./tracking/files-changed.js";
