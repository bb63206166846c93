export {
  EvalCaseError,
  EvalDatasetError,
  EvalJudgeError,
  EvalPricesError,
  EvalQueryError,
} from "./errors.js";
export { readEvalDataset } from "./eval-dataset.js";
export { readEvalPrices } from "./eval-prices.js";
export { DEFAULT_STUB, type ToolOutputStub } from "./eval-tools.js";
export {
  type Divergence,
  EVAL_ORIGIN_DOMAIN,
  EVAL_SCORE_DOMAIN,
  type EvalBudget,
  type EvalCase,
  type EvalItemResult,
  type EvalItemView,
  type EvalJudge,
  type EvalOrigin,
  type EvalPrices,
  type EvalQuery,
  type EvalReport,
  type EvalRun,
  type EvalRunTotals,
  type EvalScore,
  type EvalScoring,
  type EvalTotals,
  type EvalVariant,
  type InputCase,
  type ModelPrice,
  type QueryCase,
  type RecordedCase,
  type RunEvalOptions,
  type Scorer,
  type ToolMode,
} from "./eval-types.js";
export { runInternalEval } from "./internal-prompts.js";
export { readInternalEvalDataset } from "./internal-prompts-dataset.js";
export { checklistScorer, summaryScorer } from "./internal-prompts-scorers.js";
export {
  type CompactionOutcomeView,
  INTERNAL_PROMPT_KINDS,
  type InternalCase,
  type InternalEvalItemResult,
  type InternalEvalOrigin,
  type InternalEvalReport,
  type InternalItemView,
  type InternalPromptKind,
  type InternalScorer,
  type MemoryExtractJob,
  type MemoryExtractor,
  type RunInternalEvalOptions,
} from "./internal-prompts-types.js";
export {
  type RecordedToolCall,
  type RecordedTurn,
  readRecordedTurns,
  type TurnUsage,
} from "./recorded-turns.js";
export { caseName, DEFAULT_EVAL_CONCURRENCY, runEval } from "./run-eval.js";
