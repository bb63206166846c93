import type { Item } from "@podkit/llm-worker";
import { describeSession, type Store } from "@podkit/session-store";
import { type RunEntry, runEntryOf } from "./run-entries.js";

/** One of a run's own entries in its session log, with when it was written (epoch ms). */
export interface RunJournalEntry {
  readonly ts: number;
  readonly entry: RunEntry;
}

/**
 * The run's own entries of its session log — submitted, each attempt's start with its worker, the
 * end — oldest first: what `podkit runs show` prints. Every segment of the session is read (a
 * compaction or a fork may have moved the run's later entries). The log is the run's only journal;
 * this is the one reader of it outside the worker, so no caller parses `dispatch.run` entries itself.
 * A session that cannot be read fails with the store's typed error.
 */
export async function readRunJournal(
  store: Store<Item>,
  sessionId: string,
  runId: string,
): Promise<RunJournalEntry[]> {
  const { head, otherBranches, compacted } = await describeSession(store, sessionId);
  const found: RunJournalEntry[] = [];
  for (const segment of [head, ...otherBranches, ...compacted]) {
    for await (const entry of store.readAll({ sessionId, segmentId: segment.segmentId })) {
      const run = runEntryOf(entry);
      if (run?.run_id === runId) found.push({ ts: entry.ts, entry: run });
    }
  }
  return found.sort((a, b) => a.ts - b.ts);
}
