export { type AutoReadFile, COMPACT_TOOL_NAMES, type CompactReference } from "./compact-tools.js";
export {
  CompactionOverThresholdError,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
  NothingToCompactError,
} from "./errors.js";
