import type { Entry, MinimalItem } from "../entry/entry-schema.js";
import { NotFoundError, SessionStoreUsageError } from "../errors.js";
import type { Store } from "../store/store.js";
import { entriesBeforeCorruption, intactView } from "./entries-before-corruption.js";
import { type ApprovalSummary, summarizeEntries } from "./session-summary.js";
import type { SessionStatus } from "./status.js";

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
  /** How the head's latest turn stands (`idle` when the head has no turn yet). */
  status: SessionStatus;
  /** The head's approvals still waiting for a person, oldest first. */
  pendingApprovals: ApprovalSummary[];
  /** A child session's parent (sub-pods): its session, role, depth and spawning call. */
  parent?: { sessionId: string; role: string; depth: number; callId: string };
}

/** A session a listing left out, and why (debris: a directory or row without a readable segment). */
export interface SkippedSession {
  sessionId: string;
  problem: string;
}

/** Options of `listSessionRows`. */
export interface ListSessionsOptions {
  /** Told of every session left out of the listing (default: nobody). */
  onSkipped?: (skipped: SkippedSession) => void;
}

/**
 * The store's sessions, newest first, each as a `SessionRow` (a corrupt head is read up to its bad
 * line). Debris — a session directory (or row) with no segment, what a crash between creating it
 * and the first write leaves, or one whose first line is already damaged — is left out and
 * reported through `onSkipped`, never an error for the whole list (`podkit session doctor` finds
 * and removes it).
 */
export async function listSessionRows<TItem = MinimalItem>(
  store: Store<TItem>,
  options: ListSessionsOptions = {},
): Promise<SessionRow[]> {
  const rows: SessionRow[] = [];
  for (const sessionId of await store.listSessions()) {
    try {
      rows.push(await sessionRow(store, sessionId));
    } catch (error) {
      const problem = debrisProblem(error);
      if (problem === undefined) throw error;
      options.onSkipped?.({ sessionId, problem });
    }
  }
  return rows;
}

/** Why a session cannot be listed at all (debris), or undefined for any other failure. */
export function debrisProblem(error: unknown): string | undefined {
  if (NotFoundError.isInstance(error)) return "it has no segment";
  if (SessionStoreUsageError.isInstance(error)) return error.message;
  return undefined;
}

/** One session's row of the listing. */
export async function sessionRow<TItem = MinimalItem>(
  store: Store<TItem>,
  sessionId: string,
): Promise<SessionRow> {
  // A damaged session is listed as far as it is intact (`session show` names the bad line).
  const { overview } = await intactView(store, sessionId);
  const entries: Entry<TItem>[] = await entriesBeforeCorruption(store, {
    sessionId,
    segmentId: overview.head.segmentId,
  });
  const { turns } = summarizeEntries(entries);
  const start = entries[0];
  const parent = start?.kind === "segment_start" ? start.parent : undefined;
  return {
    sessionId,
    lastActivity: new Date(overview.head.lastEntryAt).toISOString(),
    segments: 1 + overview.otherBranches.length + overview.compacted.length,
    turns: turns.filter((t) => t.turn !== null).length,
    firstInput: turns.find((t) => t.input !== null)?.input ?? "",
    status: turns.at(-1)?.status ?? "idle",
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
