export { EvalCaseError, EvalDatasetError } from "./errors.js";
export { readEvalDataset } from "./eval-dataset.js";
export { DEFAULT_STUB, type ToolOutputStub } from "./eval-tools.js";
export {
  type Divergence,
  EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN,
  type EvalBudget,
  type EvalCase,
  type EvalItemResult,
  type EvalItemView,
  type EvalOrigin,
  type EvalReport,
  type EvalRun,
  type EvalRunTotals,
  type EvalScore,
  type EvalScoring,
  type EvalVariant,
  type InputCase,
  type RecordedCase,
  type RunEvalOptions,
  type Scorer,
  type ToolMode,
} from "./eval-types.js";
export type { RecordedToolCall, RecordedTurn, TurnUsage } from "./recorded-turns.js";
export { caseName, DEFAULT_EVAL_CONCURRENCY, runEval } from "./run-eval.js";
