// The public surface of @podkit/pod: the prompt resources entry point, the catalog, the system
// prompt template, and every error class a caller may need to recognise. The template engine,
// the prompt loader's internals and the render helpers stay inside the package.

export { builtinPromptsDir } from "./builtin-resources.js";
export {
  type ContextSectionText,
  isPodPrompt,
  type NoPromptContext,
  POD_PROMPTS,
  type PodPrompt,
  type PodPromptContext,
  type PodPromptContexts,
  PROMPT_LAYERS,
  PromptCatalog,
  PromptCatalogError,
  type PromptCatalogOptions,
  type PromptExplanation,
  type PromptLayer,
  PromptRenderError,
  UnknownPromptKeyError,
} from "./catalog/index.js";
export {
  type AutoReadFile,
  CompactionOverThresholdError,
  type CompactReference,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
  NothingToCompactError,
} from "./compaction/index.js";
export {
  type ContextSection,
  type ContextSectionState,
  NOTES_FILE,
  notesSection,
} from "./context/index.js";
export { PodkitPodError, PodUsageError } from "./errors.js";
export type { AfterTurnJob, AfterTurnJobContext } from "./pod/after-turn-jobs.js";
export {
  HooksFrozenError,
  PodBusyError,
  PodClosedError,
  PromptCancelledError,
} from "./pod/errors.js";
export type {
  CompactionOutcome,
  CompactionReason,
  PodEvent,
  PodRunResult,
  PodTrigger,
} from "./pod/events.js";
export type { InternalInterceptor, PodHooks } from "./pod/hooks.js";
export type { LanguageModel, ModelOverride } from "./pod/model.js";
export { Pod } from "./pod/pod.js";
export { COMPACTION_BREAKER_LIMIT } from "./pod/pod-compaction.js";
export { NOTIFICATION_CAPACITY, type PodOptions } from "./pod/pod-options.js";
export { RunHandle } from "./pod/run-handle.js";
export type { SystemItemKind } from "./pod/session-recorder.js";
export {
  type OpenSessionStoreOptions,
  openSessionStore,
  type PostgresStoreModule,
} from "./pod/store-selection.js";
export { SessionStorePackageMissingError, SessionStoreUrlUnsetError } from "./pod/store-selection-errors.js";
export {
  InvalidPromptRefError,
  PromptIoError,
  type PromptLoader,
  PromptNotFoundError,
  PromptRefError,
  PromptRootEscapeError,
  UnconfiguredPromptPrefixError,
  UnknownPromptPrefixError,
} from "./prompt-ref/index.js";
export * from "./resources/index.js";
export {
  entriesBeforeCorruption,
  listSessionRows,
  readSessionLine,
  type SegmentSummaryText,
  type SessionRow,
  type ShownSegment,
  sessionRow,
  summarizeEntries,
  type TurnSummary,
  type UsageTotals,
} from "./session-view/index.js";
export {
  buildSystemPromptContext,
  InvalidSystemPromptTemplateError,
  readAgentsMd,
  type ScopeView,
  type SystemPromptBody,
  type SystemPromptContext,
  type SystemPromptContextInput,
  SystemPromptRenderError,
  SystemPromptTemplate,
} from "./system-prompt/index.js";
export { type PodTelemetryOptions, TELEMETRY_SCOPE } from "./telemetry/index.js";
export {
  DEFAULT_RENDER_LIMITS,
  type RenderLimitName,
  type RenderLimits,
  TemplateEngineVersionError,
  TemplateLimitError,
  type TemplateLocation,
  TemplateRenderError,
  TemplateSyntaxError,
} from "./template/index.js";
export { bytesOfItems, type EstimateMethod, estimateTokens, type TokenEstimate } from "./usage/index.js";
export { type PodWarning, processWarningSink, type WarningSink } from "./warnings.js";
