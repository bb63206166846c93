// The public surface of @podkit/pod: what an application or a feature package calls. The pod and
// its options, events, hooks and extension points; the prompt resources, the catalog and the
// system prompt template; the session store selection; every error class a caller may need to
// recognise. The engine, the template engine, the prompt loader's internals, the builtin context
// sections and the pod's internal constants stay inside the package.

export type { ErrorKind } from "@podkit/llm-worker";
export { builtinPromptsDir } from "./builtin-resources.js";
export {
  type ContextSectionText,
  isPodPrompt,
  type NoPromptContext,
  POD_PROMPTS,
  type PodPrompt,
  type PodPromptContext,
  type PodPromptContexts,
  PromptCatalog,
  PromptCatalogError,
  type PromptCatalogOptions,
  type PromptExplanation,
  type PromptLayer,
  PromptRenderError,
  type SkillSummary,
  UnknownPromptKeyError,
} from "./catalog/index.js";
export {
  COMPACT_TOOL_NAMES,
  CompactionOverThresholdError,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
  NothingToCompactError,
} from "./compaction/index.js";
export type { ContextSection, ContextSectionState } from "./context/index.js";
export { PodkitPodError, PodUsageError } from "./errors.js";
export {
  type CompactionOutcomeView,
  caseName,
  checklistScorer,
  DEFAULT_EVAL_CONCURRENCY,
  DEFAULT_STUB,
  type Divergence,
  EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN,
  type EvalBudget,
  type EvalCase,
  EvalCaseError,
  EvalDatasetError,
  type EvalItemResult,
  type EvalItemView,
  type EvalJudge,
  EvalJudgeError,
  type EvalOrigin,
  type EvalPrices,
  EvalPricesError,
  type EvalQuery,
  EvalQueryError,
  type EvalReport,
  type EvalRun,
  type EvalRunTotals,
  type EvalScore,
  type EvalScoring,
  type EvalTotals,
  type EvalVariant,
  INTERNAL_PROMPT_KINDS,
  type InputCase,
  type InternalCase,
  type InternalEvalItemResult,
  type InternalEvalOrigin,
  type InternalEvalReport,
  type InternalItemView,
  type InternalPromptKind,
  type InternalScorer,
  type MemoryExtractJob,
  type MemoryExtractor,
  type ModelPrice,
  type QueryCase,
  type RecordedCase,
  type RecordedToolCall,
  type RecordedTurn,
  type RunEvalOptions,
  type RunInternalEvalOptions,
  readEvalDataset,
  readEvalPrices,
  readInternalEvalDataset,
  readRecordedTurns,
  runEval,
  runInternalEval,
  type Scorer,
  summaryScorer,
  type ToolMode,
  type ToolOutputStub,
  type TurnUsage,
} from "./eval/index.js";
export { OutputValidationError } from "./output/errors.js";
export type { OutputNormalization } from "./output/normalize.js";
export {
  type OutputIssue,
  type OutputSchema,
  type OutputSchemaInput,
  type OutputValidation,
  toOutputSchema,
} from "./output/output-schema.js";
export { FINAL_OUTPUT_DOMAIN, type FinalOutputPayload } from "./output/pod-output.js";
export {
  type CheckedSession,
  type CheckPolicyOptions,
  checkPolicy,
  type PolicyCheckReport,
  type PolicyFinding,
  type ToolEffect,
} from "./permissions/policy-check.js";
export type { AfterTurnJob, AfterTurnJobContext } from "./pod/after-turn-jobs.js";
export type { ApprovalAnswerGiven, ApprovalRequest, Approver, HookToolDecision } from "./pod/approvals.js";
export {
  GuardrailTrippedError,
  HooksFrozenError,
  PodBusyError,
  PodClosedError,
  PromptCancelledError,
} from "./pod/errors.js";
export type {
  CompactionOutcome,
  CompactionReason,
  JobProgressEvent,
  PodEvent,
  PodRunResult,
  PodTrigger,
} from "./pod/events.js";
export type { HookPod, PodHooks } from "./pod/hooks.js";
export {
  INVOCATION_DOMAIN,
  invocationManifestPath,
  invocationOf,
  type ManifestInvocation,
  parseInvocation,
  recordedInvocation,
} from "./pod/invocation.js";
export { type LanguageModel, type ModelOverride, podModelAdapter } from "./pod/model.js";
export { Pod } from "./pod/pod.js";
export { NOTIFICATION_CAPACITY, type PodOptions } from "./pod/pod-options.js";
export { RunHandle } from "./pod/run-handle.js";
export type { InterruptCause } from "./pod/session-recorder.js";
export {
  type OpenSessionStoreOptions,
  openSessionStore,
  openWorkspaceFsStore,
} from "./pod/store-selection.js";
export {
  MemoryPackageInvalidError,
  MemoryPackageMissingError,
  MemoryWithoutWorkspaceError,
  SessionStorePackageInvalidError,
  SessionStorePackageMissingError,
  SessionStoreUrlUnsetError,
} from "./pod/store-selection-errors.js";
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
  InvalidFileChangeError,
  RewindBlobError,
  type RewindFileReport,
  RewindJournalError,
  type RewindOptions,
  RewindPathBlockedError,
  RewindPendingError,
  type RewindProgress,
  type RewindRecovery,
  type RewindRefusal,
  RewindRefusedError,
  type RewindReport,
  recoverRewind,
  rewindSession,
} from "./rewind/index.js";
export {
  type ActiveSkill,
  SKILL_TOOL_NAME,
  SKILLS_KNOWN_DOMAIN,
  SKILLS_LOADED_DOMAIN,
  SkillDefinitionError,
  SkillListingOverBudgetError,
  type SkillMode,
  type SkillsKnown,
  type SkillsLoaded,
  type SkillsVariable,
} from "./skills/index.js";
export {
  type ChildPodInfo,
  type SubpodPlacement,
  SubpodRoleError,
  SubpodSessionError,
} from "./subpods/index.js";
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
export type { PodTelemetryOptions } from "./telemetry/index.js";
export {
  type RenderLimitName,
  type RenderLimits,
  TemplateEngineVersionError,
  TemplateLimitError,
  type TemplateLocation,
  TemplateRenderError,
  TemplateSyntaxError,
  TemplateUnprintableValueError,
  type UnprintableType,
} from "./template/index.js";
export { type EstimateMethod, estimateTokens, type TokenEstimate } from "./usage/index.js";
export type { PodWarning, WarningSink } from "./warnings.js";
