import type { MemoryPaths, RecordKind } from "../records/layout.js";
import { appendJsonLine, readJsonLines } from "./jsonl-log.js";

/**
 * One line of `memory/_usage/events.jsonl`. `shown`: the record was put in front of a model (the
 * resident summary, a query hit); `used`: a model asked for it explicitly (`memory_read`).
 */
export interface UsageEvent {
  ts: string;
  event: "shown" | "used";
  kind: RecordKind;
  slug: string;
  /** Who: `pod`, `consolidation`, `cli`. */
  by?: string;
}

export function appendUsage(paths: MemoryPaths, event: UsageEvent): Promise<void> {
  return appendJsonLine(paths.workspace, paths.usageLog, event);
}

/** Counts per record: how often it was shown, how often used. */
export interface UsageCount {
  kind: RecordKind;
  slug: string;
  shown: number;
  used: number;
}

/** A record used at least this often is protected from being dropped or heavily compressed in tidy. */
export const PROTECTION_THRESHOLD = 3;

/** Shown/used counts per record, most used first. */
export async function usageReport(paths: MemoryPaths): Promise<UsageCount[]> {
  const counts = new Map<string, UsageCount>();
  for (const raw of await readJsonLines(paths.workspace, paths.usageLog)) {
    const event = raw as Partial<UsageEvent>;
    if (typeof event.kind !== "string" || typeof event.slug !== "string") continue;
    const key = `${event.kind}/${event.slug}`;
    const count = counts.get(key) ?? { kind: event.kind, slug: event.slug, shown: 0, used: 0 };
    if (event.event === "used") count.used += 1;
    else if (event.event === "shown") count.shown += 1;
    counts.set(key, count);
  }
  return [...counts.values()].sort(
    (a, b) => b.used - a.used || b.shown - a.shown || (a.slug < b.slug ? -1 : 1),
  );
}
