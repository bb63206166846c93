export { entriesBeforeCorruption, intactView, segmentOfFile } from "./entries-before-corruption.js";
export { readSessionLine, type ShownSegment } from "./session-line.js";
export { listSessionRows, type SessionRow, sessionRow } from "./session-rows.js";
export {
  type ApprovalSummary,
  type SegmentSummaryText,
  summarizeEntries,
  type TurnSummary,
  type UsageTotals,
} from "./session-summary.js";
export { readSessionTree, type SessionTreeNode, sessionForest, treeOf } from "./session-tree.js";
export { readSessionView, type SessionView } from "./session-view.js";
