// The public surface of @podkit/manifest: loading a manifest, its scope, the errors a caller may
// need to recognise, and the defaults and provider tables other podkit packages build on.

export { jsonSyntaxProblem } from "./cascade/finalize-output.js";
export type { LayerKind, ManifestLayer, Provenance } from "./cascade/layer.js";
export {
  COMPACTION_DEFAULTS,
  defaultCompactionConfig,
  MEDIA_DEFAULTS,
  MEMORY_DEFAULTS,
  OUTPUT_DEFAULTS,
  READ_TOOLS,
  SKILLS_DEFAULTS,
  TOOLS_DEFAULTS,
} from "./defaults.js";
export {
  findWorkspace,
  type PodkitEnv,
  userConfigDir,
  userStateDir,
  workspaceDataDir,
  workspaceManifestPath,
} from "./env.js";
export { ERROR_KINDS, type ErrorKind } from "./error-kinds.js";
export {
  ManifestError,
  type ManifestErrorKind,
  type ManifestIssue,
  PodkitManifestError,
  ScopeError,
  type ScopeTargetProblem,
  WorkspaceNotFoundError,
} from "./errors.js";
export { formatKeyPath } from "./key-path.js";
export { type LoadedManifest, type LoadManifestOptions, loadManifest } from "./load-manifest.js";
export { defaultApiKeyEnv, type ModelRef, PROVIDERS, type Provider, safeParseModelRef } from "./model-ref.js";
export {
  checkOutputSchema,
  compileJsonSchema,
  type JsonSchemaCompilation,
  type JsonSchemaIssue,
  type JsonSchemaValidate,
  type OutputJsonSchema,
  type OutputSchemaCheck,
} from "./output/json-schema.js";
export {
  PROMPT_PREFIXES,
  type PromptPrefix,
  type PromptRefSpelling,
  spellPromptRef,
} from "./prompt-ref-syntax.js";
export type {
  BudgetConfig,
  BuiltinToolName,
  CompactionConfig,
  DeferSetting,
  McpServerConfig,
  MediaConfig,
  MemoryConfig,
  ModelConfig,
  OutputConfig,
  OutputStrategy,
  PermissionMode,
  PermissionRule,
  PermissionsConfig,
  PodConfig,
  ResolvedManifest,
  SandboxConfig,
  ScheduleConfig,
  SessionConfig,
  SkillsConfig,
  SubpodRoleConfig,
  ToolOutputConfig,
  ToolPackageRef,
  ToolsConfig,
  WorkerConfig,
} from "./resolved-manifest.js";
export {
  BUILTIN_TOOL_NAMES,
  OUTPUT_STRATEGIES,
  PERMISSION_MODES,
  REASONING_EFFORTS,
  SKILL_NAME_PATTERN,
  SKILL_OVER_BUDGET_ACTIONS,
  SUBPOD_DEFAULTS,
} from "./schema/layer-schema.js";
export {
  type Permission,
  Scope,
  type ScopeCheck,
  type ScopeDenial,
  type ScopeDenialReason,
  type ScopeRule,
  type ScopeRuleInput,
} from "./scope/scope.js";
