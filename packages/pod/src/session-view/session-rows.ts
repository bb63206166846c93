import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import { entriesBeforeCorruption, intactView } from "./entries-before-corruption.js";
import { type ApprovalSummary, summarizeEntries } from "./session-summary.js";

/** One session as `podkit session list --json` and `GET /sessions` list it. */
export interface SessionRow {
  sessionId: string;
  /** ISO time of the head segment's last committed entry. */
  lastActivity: string;
  /** Every segment of the session: the head, other live branches, compacted ones. */
  segments: number;
  /** Turns of the head segment that ended with an answer. */
  turns: number;
  /** The first user input of the head segment ("" when there is none). */
  firstInput: string;
  /**
   * How the head's latest turn ended, as a turn's `outcome` says it (`finished`,
   * `awaiting_approval`, `error: …`, …; `open` while it runs, or when its process died in it);
   * `idle` when the head has no turn yet.
   */
  status: string;
  /** The head's approvals still waiting for a person, oldest first. */
  pendingApprovals: ApprovalSummary[];
  /** A child session's parent (sub-pods): its session, role, depth and spawning call. */
  parent?: { sessionId: string; role: string; depth: number; callId: string };
}

/** The store's sessions, newest first, each as a `SessionRow` (a corrupt head is read up to its bad line). */
export async function listSessionRows(store: Store<Item>): Promise<SessionRow[]> {
  const rows: SessionRow[] = [];
  for (const sessionId of await store.listSessions()) rows.push(await sessionRow(store, sessionId));
  return rows;
}

/** One session's row of the listing. */
export async function sessionRow(store: Store<Item>, sessionId: string): Promise<SessionRow> {
  // A damaged session is listed as far as it is intact (`session show` names the bad line).
  const { overview } = await intactView(store, sessionId);
  const entries = await entriesBeforeCorruption(store, { sessionId, segmentId: overview.head.segmentId });
  const { turns } = summarizeEntries(entries);
  const start = entries[0];
  const parent = start?.kind === "segment_start" ? start.parent : undefined;
  return {
    sessionId,
    lastActivity: new Date(overview.head.lastEntryAt).toISOString(),
    segments: 1 + overview.otherBranches.length + overview.compacted.length,
    turns: turns.filter((t) => t.turn !== null).length,
    firstInput: turns.find((t) => t.input !== null)?.input ?? "",
    status: turns.at(-1)?.outcome ?? "idle",
    pendingApprovals: turns.flatMap((t) => t.approvals.filter((approval) => approval.pending)),
    ...(parent === undefined
      ? {}
      : {
          parent: {
            sessionId: parent.session_id,
            role: parent.role,
            depth: parent.depth,
            callId: parent.call_id,
          },
        }),
  };
}
