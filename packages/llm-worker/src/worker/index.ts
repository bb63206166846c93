export type { StopReason, StopReasonKind } from "../stream/stop-reason.js";
export type { RunResult, RunStatus, WorkerEvent, WorkerEventListener } from "./events.js";
export type {
  AbortContext,
  AfterToolBatchDecision,
  Interceptor,
  PostToolCallDecision,
  PreRequestContext,
  PreRequestDecision,
  PreToolCallDecision,
  TurnEndContext,
  TurnEndDecision,
} from "./interceptor.js";
export { type RequestConfig, RequestConfigSchema } from "./request-config.js";
export type { UsageRecord } from "./usage.js";
export { Worker } from "./worker.js";
export {
  type CachePolicy,
  DEFAULT_INTERRUPTED_TOOL_SUMMARY,
  type ResponseCommit,
  type RunOptions,
  type WorkerOptions,
} from "./worker-options.js";
