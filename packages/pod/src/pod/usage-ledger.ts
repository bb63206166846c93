import type { UsageRecord } from "@podkit/llm-worker";

/**
 * The usage records of the head segment and of the run in progress. The one writer is the
 * worker's usage callback (after its `llm_usage` entry is written); events never add to it.
 * The segment's records follow the log: empty in a compacted segment, cut back by a rollback.
 */
export class UsageLedger {
  private readonly segment: UsageRecord[];
  private run: UsageRecord[] = [];

  constructor(restored: readonly UsageRecord[]) {
    this.segment = [...restored];
  }

  /** Every record of the head segment, one per model request. */
  get records(): readonly UsageRecord[] {
    return this.segment;
  }

  /** One model request's usage, persisted already. */
  record(usage: UsageRecord): void {
    this.segment.push(usage);
    this.run.push(usage);
  }

  /** A run starts: its own list begins empty. */
  startRun(): void {
    this.run = [];
  }

  /** The records of the run in progress (across a compaction inside it). */
  runRecords(): UsageRecord[] {
    return [...this.run];
  }

  /** The head segment now holds exactly `records` (a compacted segment, a rolled-back turn). */
  resetSegment(records: readonly UsageRecord[]): void {
    this.segment.splice(0, this.segment.length, ...records);
  }
}
