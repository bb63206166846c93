import type { MinimalItem } from "../entry/entry-schema.js";
import { SessionLog, type SessionLogOptions } from "../log/session-log.js";
import type { ApprovalRecord } from "../replay/session-state.js";
import type { Store } from "../store/store.js";
import { isAnswerable } from "./answer-approval.js";

/** The approvals of one session's head segment. */
export interface SessionApprovals {
  sessionId: string;
  segmentId: string;
  /** The last run ended `awaiting_approval`: once nothing is pending, `resume()` goes on. */
  awaitingApproval: boolean;
  approvals: ApprovalRecord[];
}

/** What `listApprovals` found, and the sessions it could not read (named, never fatal). */
export interface ApprovalListing {
  sessions: SessionApprovals[];
  unreadable: { sessionId: string; error: unknown }[];
}

/**
 * The approvals of every session in `store` (a workspace's sessions on the filesystem, the whole
 * database on PostgreSQL), newest session first; with `pendingOnly`, only sessions with a pending
 * call and only those calls. A session that cannot be read is listed in `unreadable`.
 */
export async function listApprovals<TItem = MinimalItem>(
  store: Store<TItem>,
  options: SessionLogOptions<TItem> & { pendingOnly?: boolean; sessionIds?: readonly string[] } = {},
): Promise<ApprovalListing> {
  const listing: ApprovalListing = { sessions: [], unreadable: [] };
  for (const sessionId of options.sessionIds ?? (await store.listSessions())) {
    let log: SessionLog<TItem>;
    try {
      log = await SessionLog.open(store, sessionId, options);
    } catch (error) {
      listing.unreadable.push({ sessionId, error });
      continue;
    }
    const { state } = log;
    const approvals = options.pendingOnly === true ? state.approvals.filter(isAnswerable) : state.approvals;
    if (approvals.length === 0) continue;
    listing.sessions.push({
      sessionId,
      segmentId: state.segmentId,
      awaitingApproval: state.awaitingApproval,
      approvals: [...approvals],
    });
  }
  return listing;
}
