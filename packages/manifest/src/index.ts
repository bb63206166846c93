export type { LayerKind, ManifestLayer, Provenance } from "./cascade/layer.js";
export {
  COMPACTION_DEFAULTS,
  DEFAULT_SYSTEM_PROMPT,
  MEMORY_DEFAULTS,
  READ_TOOLS,
  SESSION_DEFAULTS,
  TOOLS_DEFAULTS,
  WRITE_TOOLS,
} from "./defaults.js";
export {
  defaultPodkitEnv,
  findWorkspace,
  type PodkitEnv,
  userConfigDir,
  userManifestPath,
  workspaceManifestPath,
} from "./env.js";
export {
  ManifestError,
  type ManifestErrorKind,
  type ManifestIssue,
  PodkitManifestError,
  ScopeError,
  type ScopeTargetProblem,
} from "./errors.js";
export { formatKeyPath } from "./key-path.js";
export { type LoadedManifest, type LoadManifestOptions, loadManifest } from "./load-manifest.js";
export {
  defaultApiKeyEnv,
  defaultContextWindow,
  type ModelRef,
  PROVIDERS,
  type Provider,
  parseModelRef,
} from "./model-ref.js";
export type {
  BuiltinToolName,
  CompactionConfig,
  McpServerConfig,
  MemoryConfig,
  ModelConfig,
  PodConfig,
  ResolvedManifest,
  ScheduleConfig,
  SessionConfig,
  ToolOutputConfig,
  ToolPackageRef,
  ToolsConfig,
  WorkerConfig,
} from "./resolved-manifest.js";
export { BUILTIN_TOOL_NAMES, REASONING_EFFORTS, SESSION_STORES } from "./schema/layer-schema.js";
export {
  type Permission,
  Scope,
  type ScopeCheck,
  type ScopeDenial,
  type ScopeDenialReason,
  type ScopeRule,
  type ScopeRuleInput,
} from "./scope/scope.js";
