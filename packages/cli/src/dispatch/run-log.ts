import { RUN_DOMAIN, RunEntrySchema, type RunInfo } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import { describeSession, type Entry, type Store } from "@podkit/session-store";

/**
 * The run's own entries of its session log (submitted, each attempt's start with its worker, the
 * end), as lines for `podkit runs show`. A session that cannot be read says why instead: that
 * is the typed store error the run was dead-lettered with.
 */
export async function runLogLines(store: Store<Item>, run: RunInfo): Promise<string[]> {
  try {
    const { head, otherBranches, compacted } = await describeSession(store, run.sessionId);
    const lines: { ts: number; text: string }[] = [];
    for (const segment of [head, ...otherBranches, ...compacted]) {
      for await (const entry of store.readAll({ sessionId: run.sessionId, segmentId: segment.segmentId })) {
        const text = lineOf(entry, run.runId);
        if (text !== undefined) lines.push({ ts: entry.ts, text });
      }
    }
    return lines.sort((a, b) => a.ts - b.ts).map(({ ts, text }) => `${new Date(ts).toISOString()}  ${text}`);
  } catch (error) {
    return [`the session log cannot be read: ${error instanceof Error ? error.message : String(error)}`];
  }
}

function lineOf(entry: Entry<Item>, runId: string): string | undefined {
  if (entry.kind !== "extension" || entry.domain !== RUN_DOMAIN) return undefined;
  const parsed = RunEntrySchema.safeParse(entry.payload);
  if (!parsed.success || parsed.data.run_id !== runId) return undefined;
  const run = parsed.data;
  switch (run.event) {
    case "submitted":
      return `submitted${run.input === null ? " (continue)" : `: ${JSON.stringify(run.input.slice(0, 80))}`}`;
    case "started":
      return `attempt ${run.attempt} ${run.resumes ? "resumed" : "started"} on ${run.worker}`;
    case "ended":
      return `ended ${run.state}${run.result === undefined ? "" : ` (${run.result})`}${run.error === undefined ? "" : `: ${run.error.type}: ${run.error.message}`}`;
  }
}
