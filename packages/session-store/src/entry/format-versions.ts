import type { Entry, FormatVersion } from "./entry-schema.js";

// What each format version added that a reader of the version before cannot read (the rule of
// what bumps the version is in docs/session-store.md, "Format versions"). v2 changed only the
// framing of lines, so every entry a v1 segment can hold is v1's; v3 adds approvals (their two
// kinds and the `awaiting_approval` result), `budget_exhausted`, delegated approvals
// (`approval_requested.child_session_id`) and `segment_start.parent` (written only in new
// segments, so never appended).

/**
 * The oldest format version whose segments may hold `entry`. A writer never appends an entry
 * to a segment of an older version: it continues in a new segment first (see `SessionLog`).
 */
export function formatIntroducing(entry: Entry<unknown>): FormatVersion {
  switch (entry.kind) {
    case "approval_requested":
    case "approval_answered":
      return 3;
    case "run_completed":
      return entry.result === "awaiting_approval" || entry.result === "budget_exhausted" ? 3 : 1;
    default:
      return 1;
  }
}

/**
 * True for the approval entries main wrote into v1 and v2 segments before format v3 existed
 * (`approval_requested` without `child_session_id`, `approval_answered`, a `run_completed`
 * awaiting approval). A segment that already holds an approval entry takes more of them in its
 * own version: no reader that lacks approvals could read it anyway, and an answer must land in
 * the segment of its request (answers never fork).
 */
export function isLegacyApprovalEntry(entry: Entry<unknown>): boolean {
  switch (entry.kind) {
    case "approval_requested":
      return entry.child_session_id === undefined;
    case "approval_answered":
      return true;
    case "run_completed":
      return entry.result === "awaiting_approval";
    default:
      return false;
  }
}
