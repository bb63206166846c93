import { type RunEntry, type RunInfo, readRunJournal } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";

/**
 * The run's own entries of its session log (submitted, each attempt's start with its worker, the
 * end), as lines for `podkit runs show`, read through dispatch's `readRunJournal`. A session that
 * cannot be read says why instead: that is the typed store error the run was dead-lettered with.
 */
export async function runLogLines(store: Store<Item>, run: RunInfo): Promise<string[]> {
  try {
    const journal = await readRunJournal(store, run.sessionId, run.runId);
    return journal.map(({ ts, entry }) => `${new Date(ts).toISOString()}  ${lineOf(entry)}`);
  } catch (error) {
    return [`the session log cannot be read: ${error instanceof Error ? error.message : String(error)}`];
  }
}

function lineOf(run: RunEntry): string {
  switch (run.event) {
    case "submitted":
      return `submitted${run.input === null ? " (continue)" : `: ${JSON.stringify(run.input.slice(0, 80))}`}`;
    case "started":
      return `attempt ${run.attempt} ${run.resumes ? "resumed" : "started"} on ${run.worker}`;
    case "ended": {
      const typed = run.output === undefined ? "" : " with a typed answer";
      return `ended ${run.state}${run.result === undefined ? "" : ` (${run.result})`}${typed}${run.error === undefined ? "" : `: ${run.error.type}: ${run.error.message}`}`;
    }
  }
}
