// The public surface of @podkit/memory: what apps and the CLI call — memory for a pod
// (`attachMemory`), the jobs, the workspace linter and query, the pure linter — and the errors.
// Record formats, the store, the tools, the lock and the input builders stay inside.

export type { ErrorKind } from "@podkit/llm-worker";
export type { KnowledgeCandidate } from "./consolidate/candidate-report.js";
export type { LockInfo } from "./consolidate/consolidation-lock.js";
export type { GitCommitOutcome } from "./consolidate/git-commit.js";
export {
  type MemoryConsolidationResult,
  type RunMemoryConsolidationOptions,
  runMemoryConsolidation,
  type TidyOutcome,
} from "./consolidate/run-consolidation.js";
export {
  MemoryEditError,
  MemoryError,
  MemoryFileRefusedError,
  MemoryLintError,
  MemoryRecordNotFoundError,
  MemoryUsageError,
  MemoryWorkerError,
} from "./errors.js";
export type { StagingEntry } from "./extract/extract-schema.js";
export {
  type MemoryExtractResult,
  type RunMemoryExtractOptions,
  runMemoryExtract,
} from "./extract/run-memory-extract.js";
export {
  formatDiagnostics,
  type LintCode,
  type LintDiagnostic,
  type LintReport,
} from "./lint/diagnostics.js";
export { lintMemory } from "./lint/lint-memory.js";
export type { MemoryFile } from "./lint/lint-record.js";
export {
  type AfterTurnJobLike,
  type AttachMemoryOptions,
  attachMemory,
  type MemoryAttachment,
  type MemoryHost,
} from "./pod/attach-memory.js";
export type { AfterTurnJobContext, MemoryJobEvent } from "./pod/memory-job.js";
export type { ContextSectionLike, MemorySectionData } from "./pod/memory-section.js";
export { RECORD_KINDS, type RecordKind } from "./records/layout.js";
export type { AuditRecord } from "./store/audit-log.js";
export type { QueryHit, QueryMatch, QueryOptions } from "./store/query-memory.js";
export type { MemoryJobOptions, MemoryPrompts } from "./worker/memory-model.js";
export { lintWorkspaceMemory, queryWorkspaceMemory } from "./workspace-api.js";
