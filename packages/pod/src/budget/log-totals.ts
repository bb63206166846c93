import type { Item } from "@podkit/llm-worker";
import { descendantsOf, type Store } from "@podkit/session-store";

/** What a session's log says it spent: tokens (input + output of every request) and run wall time. */
export interface SpentTotals {
  tokens: number;
  wallMs: number;
}

/**
 * Totals over every segment of a session, read from its log: `llm_usage` entries for tokens, each
 * `invoke` to its terminal entry for wall time (an unterminated turn, a crash, counts to its last
 * entry). The log is the record budgets count from, so a restore or another process keeps counting.
 */
export async function sessionTotals(store: Store<Item>, sessionId: string): Promise<SpentTotals> {
  const totals: SpentTotals = { tokens: 0, wallMs: 0 };
  for (const segmentId of await store.listSegments(sessionId)) {
    let invokedAt: number | undefined;
    let lastTs = 0;
    for await (const batch of store.readFrom({ sessionId, segmentId }, 0)) {
      for (const entry of batch) {
        lastTs = entry.ts;
        if (entry.kind === "llm_usage") totals.tokens += entry.input_tokens + entry.output_tokens;
        else if (entry.kind === "invoke") invokedAt = entry.ts;
        else if (
          (entry.kind === "run_completed" || entry.kind === "run_errored") &&
          invokedAt !== undefined
        ) {
          totals.wallMs += entry.ts - invokedAt;
          invokedAt = undefined;
        }
      }
    }
    if (invokedAt !== undefined) totals.wallMs += lastTs - invokedAt;
  }
  return totals;
}

/** Tokens of a session and of every descendant session (its sub-pods, at any depth). */
export async function treeTokens(store: Store<Item>, rootSessionId: string): Promise<number> {
  let tokens = (await sessionTotals(store, rootSessionId)).tokens;
  for (const child of await descendantsOf(store, rootSessionId))
    tokens += (await sessionTotals(store, child.sessionId)).tokens;
  return tokens;
}
