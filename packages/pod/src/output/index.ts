export { OutputValidationError } from "./errors.js";
export {
  checkFinalAnswer,
  checkFinalAnswerArguments,
  type FinalAnswerCheck,
  type FinalAnswerToolOptions,
  finalAnswerTool,
} from "./final-answer-tool.js";
export { type NormalizedAnswer, normalizeAnswer, type OutputNormalization } from "./normalize.js";
export {
  type OutputIssue,
  type OutputSchema,
  type OutputSchemaInput,
  type OutputValidation,
  toOutputSchema,
} from "./output-schema.js";
export { type PartialOutputElement, PartialOutputTracker, type PartialOutputUpdate } from "./partial.js";
