export {
  type AwaitedApproval,
  approvalsAwaitedBy,
  type NextAfterAnswer,
  nextAfterAnswer,
  sessionHoldingCall,
} from "./awaited-approvals.js";
export {
  type Decider,
  type DecisionOutcome,
  type DecisionSummary,
  decisionOf,
  type GuardrailPoint,
  POLICY_DECISION_DOMAIN,
  type PolicyDecision,
  PolicyDecisionSchema,
} from "./decisions.js";
export { entriesBeforeCorruption, intactView, segmentOfFile } from "./entries-before-corruption.js";
export {
  EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN,
  type EvalOriginSummary,
  type EvalScoreSummary,
  type EvalSummary,
} from "./eval-summary.js";
export { lineOf } from "./session-line.js";
export {
  type ListSessionsOptions,
  listSessionRows,
  type SessionRow,
  type SkippedSession,
  sessionRow,
} from "./session-rows.js";
export {
  type ApprovalSummary,
  FINAL_OUTPUT_DOMAIN,
  type OutputSummary,
  type SegmentSummaryText,
  summarizeEntries,
  type TurnSummary,
  type UsageTotals,
} from "./session-summary.js";
export {
  type Ancestry,
  ancestryOf,
  descendantsOf,
  parentOf,
  rootSessionOf,
  type TreeStep,
} from "./session-tree.js";
export { readSessionLine, readSessionView, type SessionView, type ShownSegment } from "./session-view.js";
export type { SessionStatus, TurnStatus } from "./status.js";
export { readSessionTree, type SessionTreeNode, sessionForest, treeOf } from "./tree-view.js";
