import type { Entry } from "../entry/entry-schema.js";
import { SessionStoreUsageError } from "../errors.js";

// Entries that only record bookkeeping about a finished turn; a cut after `turn_end` keeps them
// so the fork starts with the config that was in effect when the next turn would have begun.
const BOOKKEEPING = new Set<Entry["kind"]>([
  "llm_usage",
  "run_completed",
  "run_errored",
  "config_changed",
  "extension",
]);

/**
 * Number of leading entries of a segment that make up its state at the end of turn `turn`:
 * everything through that turn's `turn_end` plus the bookkeeping entries right after it. The
 * segment's starting turn (its lineage `at_turn`, else 0) cuts before the first `invoke`.
 */
export function entriesThroughTurn<TItem>(
  entries: readonly Entry<TItem>[],
  turn: number,
  segmentId: string,
): number {
  const first = entries[0];
  const startTurn =
    first?.kind === "segment_start" ? ((first.compacted_from ?? first.forked_from)?.at_turn ?? 0) : 0;
  let end = -1;
  if (turn === startTurn) {
    end = entries.findIndex((entry) => entry.kind === "invoke");
    return end === -1 ? entries.length : end;
  }
  const turns: number[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry?.kind === "turn_end") {
      turns.push(entry.turn);
      if (entry.turn === turn) end = i + 1;
    }
  }
  if (end === -1) {
    const known =
      turns.length > 0 ? `turns ${startTurn}..${turns[turns.length - 1]}` : `only turn ${startTurn}`;
    throw new SessionStoreUsageError(
      `segment ${segmentId} has no turn ${turn} (it holds ${known}); pick one of those`,
    );
  }
  while (end < entries.length) {
    const next = entries[end];
    if (next === undefined || !BOOKKEEPING.has(next.kind)) break;
    end++;
  }
  return end;
}
