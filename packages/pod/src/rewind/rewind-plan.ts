import {
  describeSession,
  type Entry,
  entriesThroughTurn,
  SessionLog,
  type Store,
} from "@podkit/session-store";
import { PodUsageError } from "../errors.js";
import { INVOCATION_DOMAIN } from "../pod/invocation.js";
import type { RewindRefusal } from "./errors.js";
import { fileHistories, recordedChanges } from "./recorded-changes.js";
import { type LineageSegment, readLineage, segmentHoldingTurn } from "./session-lineage.js";
import { inspectPath, type Presence, presenceLabel } from "./workspace-files.js";

/** One file of a rewind's report. */
export interface RewindFileReport {
  /** Workspace-relative POSIX path. */
  path: string;
  /** `write` restores content, `delete` removes a file turn N did not have, `unchanged`: already right. */
  action: "write" | "delete" | "unchanged";
  /** What is there before the rewind: a digest, `null` (absent), or `symlink`/`directory`/`other`. */
  from: string | null;
  /** What is there after it: the digest of its content at the end of turn N, `null` for none. */
  to: string | null;
}

/** A recorded change as a file-change entry holds it. */
export interface ChangeRecord {
  path: string;
  before: string | null;
  after: string | null;
}

/** What a rewind will do, worked out before anything is written. */
export interface RewindPlan<TItem> {
  sessionId: string;
  toTurn: number;
  /** The session's head, opened at the entry count the plan was made from (the claim's condition). */
  log: SessionLog<TItem>;
  /** The conversation's fork: the segment holding turn N whole; `null` when nothing to cut or not asked. */
  fork: { source: LineageSegment<TItem>; carried: { domain: string; payload: unknown }[] } | null;
  conversation: "fork" | "unchanged" | "skipped";
  files: RewindFileReport[];
  /** Operations on the workspace (deletions first), with the mode of each file replaced. */
  operations: (RewindFileReport & { action: "write" | "delete"; mode: number | null })[];
  refused: RewindRefusal[];
  /**
   * The file-change record of the rewind in the segment it leaves (from the last recorded content
   * to turn N's), and in the new head when only the conversation goes back (from turn N's content
   * to what stays on disk): each line of work then records what its files are.
   */
  headRecord: ChangeRecord[];
  forkRecord: ChangeRecord[];
  /** Newest `ts` of the head segment as read. */
  headLastTs: number;
}

export interface PlanOptions<TItem> {
  store: Store<TItem>;
  sessionId: string;
  toTurn: number;
  root: string;
  files: boolean;
  conversation: boolean;
}

/** Reads the session and the workspace and works out the rewind; writes nothing. */
export async function planRewind<TItem>(options: PlanOptions<TItem>): Promise<RewindPlan<TItem>> {
  const { store, sessionId, toTurn } = options;
  const overview = await describeSession(store, sessionId);
  const log = await SessionLog.openSegment(store, { sessionId, segmentId: overview.head.segmentId });
  const finished = log.state.turn;
  if (toTurn > finished) {
    throw new PodUsageError(
      `session ${sessionId} has ${finished} finished turn${finished === 1 ? "" : "s"}: there is no turn ${toTurn} to rewind to`,
      { hint: `pick a turn from 0 to ${finished}; \`podkit session show ${sessionId}\` lists them` },
    );
  }
  const line = await readLineage(store, overview, log.entryCount);
  const head = line[line.length - 1] as LineageSegment<TItem>;
  const plan: RewindPlan<TItem> = {
    sessionId,
    toTurn,
    log,
    fork: null,
    conversation: "skipped",
    files: [],
    operations: [],
    refused: [],
    headRecord: [],
    forkRecord: [],
    headLastTs: Math.max(...head.entries.map((entry) => entry.ts)),
  };
  if (options.conversation) planConversation(plan, line, head);
  const histories = fileHistories(recordedChanges(line), toTurn);
  const moved = histories.filter((history) => history.atTurn !== history.last);
  if (!options.files) {
    if (plan.fork !== null)
      plan.forkRecord = moved.map(({ path, atTurn, last }) => ({ path, before: atTurn, after: last }));
  } else {
    plan.headRecord = moved.map(({ path, atTurn, last }) => ({ path, before: last, after: atTurn }));
    for (const history of histories) {
      const current = await inspectPath(options.root, history.path);
      const from = presenceLabel(current);
      if (holds(current, history.atTurn)) {
        plan.files.push({ path: history.path, action: "unchanged", from, to: history.atTurn });
        continue;
      }
      if (!holds(current, history.last))
        plan.refused.push({
          path: history.path,
          recorded: history.last,
          current: from as RewindRefusal["current"],
        });
      const action = history.atTurn === null ? "delete" : "write";
      const operation = {
        path: history.path,
        action,
        from,
        to: history.atTurn,
        mode: current.kind === "file" ? current.mode : null,
      } as const;
      plan.files.push({ path: operation.path, action, from, to: operation.to });
      plan.operations.push(operation);
    }
    plan.operations.sort((a, b) => (a.action === b.action ? 0 : a.action === "delete" ? -1 : 1));
  }
  return plan;
}

/** Decides the conversation's fork: the newest segment of the line holding turn N whole. */
function planConversation<TItem>(
  plan: RewindPlan<TItem>,
  line: readonly LineageSegment<TItem>[],
  head: LineageSegment<TItem>,
): void {
  const { sessionId, toTurn, log } = plan;
  if (log.state.parent !== undefined) {
    throw new PodUsageError(
      `session ${sessionId} is a sub-pod's session (a child of session ${log.state.parent.session_id}): its conversation belongs to its parent's run`,
      { hint: "rewind its files alone with --files-only, or rewind the parent session" },
    );
  }
  const source = segmentHoldingTurn(line, toTurn);
  if (source === undefined) {
    throw new PodUsageError(
      `session ${sessionId} no longer holds turn ${toTurn}: its line of work starts after turn ${line[0]?.startTurn ?? 0}`,
      { hint: `pick a turn from ${line[0]?.startTurn ?? 0} to ${log.state.turn}` },
    );
  }
  const cut = entriesThroughTurn(source.entries, toTurn, source.ref.segmentId);
  if (source === head && cut === head.entries.length) {
    plan.conversation = "unchanged";
    return;
  }
  plan.conversation = "fork";
  const invocation = latestInvocation(line, source, cut);
  plan.fork = {
    source,
    carried: invocation === undefined ? [] : [{ domain: INVOCATION_DOMAIN, payload: invocation }],
  };
}

/**
 * The payload of the last `pod.invocation` record the fork's prefix holds: a fork starts with
 * empty extension state, and the record is how `podkit resume` continues with the manifest the
 * session was started with, so the new head carries it.
 */
function latestInvocation<TItem>(
  line: readonly LineageSegment<TItem>[],
  source: LineageSegment<TItem>,
  cut: number,
): unknown {
  let found: unknown;
  for (const segment of line) {
    const entries: readonly Entry<TItem>[] =
      segment === source ? segment.entries.slice(0, cut) : segment.entries;
    for (const entry of entries)
      if (entry.kind === "extension" && entry.domain === INVOCATION_DOMAIN) found = entry.payload;
    if (segment === source) break;
  }
  return found;
}

/** True when `presence` is the content `digest` (`null`: nothing there). */
export function holds(presence: Presence, digest: string | null): boolean {
  if (digest === null) return presence.kind === "absent";
  return presence.kind === "file" && presence.digest === digest;
}
