// The public surface of @podkit/memory: the CLI-level jobs, the pure linter and query,
// the record formats, the memory tools, and the pod integration. Worker plumbing, the lock and
// the input builders stay inside.

export {
  type KnowledgeCandidate,
  knowledgeCandidates,
} from "./consolidate/candidate-report.js";
export type { LockInfo } from "./consolidate/consolidation-lock.js";
export type { GitCommitOutcome } from "./consolidate/git-commit.js";
export {
  type MemoryConsolidationResult,
  type RunMemoryConsolidationOptions,
  runMemoryConsolidation,
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
export {
  type Extracted,
  type StagingEntry,
  StagingEntrySchema,
  WriteExtractedSchema,
} from "./extract/extract-schema.js";
export { estimateTokens, flattenEntries } from "./extract/flat-lines.js";
export { EXTRACT_POINTER_DOMAIN, type ExtractPointer, extractStart } from "./extract/pointer.js";
export { type ExtractOutcome, type ExtractSlice, extractSlice } from "./extract/run-extract.js";
export {
  type MemoryExtractResult,
  type RunMemoryExtractOptions,
  runMemoryExtract,
} from "./extract/run-memory-extract.js";
export {
  formatDiagnostics,
  LINT_CODES,
  type LintCode,
  type LintDiagnostic,
  type LintReport,
} from "./lint/diagnostics.js";
export {
  lintChange,
  lintMemory,
  lintTree,
  type MemoryChange,
  type RecordLint,
  type SourceRules,
} from "./lint/lint-memory.js";
export type { MemoryFile, ParsedRecord } from "./lint/lint-record.js";
export {
  type AttachMemoryOptions,
  attachMemory,
  type MemoryAttachment,
  type MemoryHost,
} from "./pod/attach-memory.js";
export { type ContextSectionLike, memoryContextSection } from "./pod/memory-section.js";
export { joinRecord, splitRecord } from "./records/frontmatter.js";
export {
  type MemoryPaths,
  memoryPaths,
  RECORD_KINDS,
  type RecordKind,
  recordLabel,
} from "./records/layout.js";
export {
  BODY_MAX_CHARS,
  DECISION_STATUSES,
  DESCRIPTION_MAX_CHARS,
  type DecisionFrontmatter,
  formatTimestamp,
  KNOWLEDGE_KINDS,
  type KnowledgeFrontmatter,
  type RequestFrontmatter,
  type Source,
  SUMMARY_MAX_CHARS,
  type SummaryFrontmatter,
} from "./records/record-schema.js";
export { SLUG_PATTERN, similarSlugs, slugProblem } from "./records/slug.js";
export { type AuditRecord, readAuditLog } from "./store/audit-log.js";
export { MEMORY_FILE_MAX_BYTES } from "./store/contained-read.js";
export { loadMemoryFiles } from "./store/load-memory-files.js";
export { type ChangeResult, MemoryStore, type MemoryStoreOptions } from "./store/memory-store.js";
export {
  type KnowledgeHit,
  type QueryHit,
  type QueryMatch,
  type QueryOptions,
  queryKnowledge,
  queryMemory,
} from "./store/query-memory.js";
export { type UsageCount, type UsageEvent, usageReport } from "./store/usage-log.js";
export {
  consolidationTools,
  knowledgeQueryTool,
  mainWorkerMemoryTools,
  memoryDeleteTool,
  memoryEditTool,
  memoryQueryTool,
  memoryReadTool,
  memoryWriteTool,
  type StoreSource,
} from "./tools/memory-tools.js";
export type { MemoryJobOptions, MemoryPrompts } from "./worker/memory-model.js";
export { lintWorkspaceMemory, queryWorkspaceMemory } from "./workspace-api.js";
