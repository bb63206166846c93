export * from "./approvals/index.js";
export * from "./blobs/index.js";
export type { EntryCodec } from "./entry/entry-codec.js";
export { createEntryCodec } from "./entry/entry-codec.js";
export type {
  ApprovalDecision,
  Entry,
  EntryInput,
  EntryKind,
  EntryOf,
  EntrySchemas,
  InvokeTrigger,
  Lineage,
  MinimalItem,
  ParentLink,
  RunStatus,
  SegmentStartEntry,
  SystemItem,
} from "./entry/entry-schema.js";
export {
  EntrySchema,
  FORMAT_VERSION,
  MinimalItemSchema,
  RunStatusSchema,
} from "./entry/entry-schema.js";
export { ERROR_KINDS, type ErrorKind } from "./error-kinds.js";
export {
  AppendFailedError,
  BlobCorruptError,
  CorruptEntryError,
  InvalidEntryError,
  LockTimeoutError,
  NotFoundError,
  ReplayError,
  SessionBusyError,
  SessionStoreError,
  SessionStoreUsageError,
  UnsupportedFormatError,
} from "./errors.js";
export type { FsStoreOptions } from "./fs/fs-store.js";
export { FsStore, sessionsRoot } from "./fs/fs-store.js";
export { appendAsGuest } from "./log/guest-append.js";
export type { SegmentInfo, SessionOverview } from "./log/session-head.js";
export { describeSession } from "./log/session-head.js";
export type {
  AppendResult,
  DriftFork,
  SegmentInit,
  SessionLogOptions,
  WriteCallOptions,
} from "./log/session-log.js";
export { restoreSession, SessionLog } from "./log/session-log.js";
export * from "./read/index.js";
export type { ExtensionFold, ReplayOptions } from "./replay/replay.js";
export { replay } from "./replay/replay.js";
export type {
  ApprovalAnswer,
  ApprovalRecord,
  HistorySource,
  InFlightTurn,
  LineageRef,
  SessionState,
  UsageRecord,
} from "./replay/session-state.js";
export { entriesThroughTurn } from "./replay/turn-cut.js";
export type { StoreCommit } from "./store/observed-store.js";
export { observeCommits } from "./store/observed-store.js";
export type {
  AppendOutcome,
  ReadOptions,
  SegmentRef,
  SegmentSummary,
  Store,
  StorePackage,
  StorePackageOptions,
  TruncateOutcome,
  WriteOptions,
} from "./store/store.js";
export { assertReadFrom } from "./store/store.js";
