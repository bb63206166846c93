export type { AutoReadFile, CompactReference } from "./compact-tools.js";
export {
  CompactionOverThresholdError,
  CompactSummaryMissingError,
  CompactSummaryOversizeError,
  NothingToCompactError,
} from "./errors.js";
