import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import { v7 as uuidv7 } from "uuid";
import { memoryPaths } from "../records/layout.js";
import type { MemoryJobOptions } from "../worker/memory-model.js";
import { readExtractMarker, removeExtractMarker, wasStaged, writeExtractMarker } from "./extract-journal.js";
import { estimateSliceTokens, flattenEntries } from "./flat-lines.js";
import type { ExtractPointer } from "./pointer.js";
import { type ExtractOutcome, extractSlice } from "./run-extract.js";
import { collect, type PendingSegment, pendingSegments, type SegmentReader } from "./segment-chain.js";

/** A session as an extract pass sees it: its segments, its head's pointer, and the writer of pointers. */
export interface ExtractSession extends SegmentReader {
  readonly sessionId: string;
  readonly headSegmentId: string;
  /** The head segment's folded `memory.extract` state (undefined: none yet). */
  pointer(): unknown;
  /** Appends an advanced pointer to the head segment (only after what it covers is staged). */
  appendPointer(pointer: ExtractPointer): Promise<void>;
}

/** When a pass extracts the head segment's new entries. */
export interface ExtractPassOptions {
  /** Only once they reach this many tokens (`estimateSliceTokens`)… */
  readonly threshold: number;
  /** …unless forced: a session's tail at close, or the tail a dead process left. */
  readonly force?: boolean;
  /** Called before the first model call of the pass (progress display). */
  readonly onStart?: () => void;
}

/** What a pass did: one outcome per slice extracted, and the head's new tokens when below the threshold. */
export interface ExtractPassResult {
  readonly outcomes: readonly (ExtractOutcome & { segmentId: string })[];
  /** The size of the head's new entries (`estimateSliceTokens`). */
  readonly tokens: number;
  readonly belowThreshold?: { tokens: number; threshold: number };
  /** A slice an interrupted extract had already staged: only its pointer was appended now. */
  readonly recovered?: ExtractPointer;
}

/**
 * One extract pass over a session, made lossless: first an extract a dead process left
 * half done is settled (`extract-journal.ts`); then the tails of segments compaction left behind
 * are extracted whatever their size, each before the pointer moves past it; then the head's new
 * entries once they reach the threshold (or at once when forced). Every slice goes through a
 * marker, so a kill at any point neither loses it nor stages it twice.
 */
export async function runExtractPass(
  job: MemoryJobOptions,
  session: ExtractSession,
  options: ExtractPassOptions,
): Promise<ExtractPassResult> {
  const paths = memoryPaths(job.workspace);
  const recovered = await settleInterrupted(job, session);
  const pending = await pendingSegments(session, session.headSegmentId, recovered ?? session.pointer());
  const outcomes: (ExtractOutcome & { segmentId: string })[] = [];
  const withRecovered = recovered === undefined ? {} : { recovered };
  let tokens = 0;
  let started = false;
  for (const [i, segment] of pending.entries()) {
    const isHead = i === pending.length - 1;
    const entries =
      segment.entries?.slice(segment.from) ??
      (await collect(session.readFrom(segment.segmentId, segment.from)));
    if (isHead) tokens = estimateSliceTokens(entries);
    if (isHead && options.force !== true && (entries.length === 0 || tokens < options.threshold)) {
      return { outcomes, tokens, belowThreshold: { tokens, threshold: options.threshold }, ...withRecovered };
    }
    const next = isHead ? undefined : pending[i + 1];
    if (flattenEntries(entries) === "") {
      // Nothing to extract; an older segment still moves the pointer on (once), the head does not.
      if (next !== undefined)
        await session.appendPointer({ segment_id: next.segmentId, next_entry: next.from });
      continue;
    }
    if (!started) options.onStart?.();
    started = true;
    const outcome = await extractMarked(job, session, segment, entries);
    await session.appendPointer(
      next === undefined ? outcome.pointer : { segment_id: next.segmentId, next_entry: next.from },
    );
    await removeExtractMarker(paths, session.sessionId);
    outcomes.push({ ...outcome, segmentId: segment.segmentId });
  }
  return { outcomes, tokens, ...withRecovered };
}

/** Extracts one slice with its marker written first (the staging id decided before the model call). */
async function extractMarked(
  job: MemoryJobOptions,
  session: ExtractSession,
  segment: PendingSegment,
  entries: readonly Entry<Item>[],
): Promise<ExtractOutcome> {
  const stagingId = uuidv7();
  const range: [number, number] = [segment.from, segment.from + entries.length - 1];
  await writeExtractMarker(memoryPaths(job.workspace), {
    session_id: session.sessionId,
    segment_id: segment.segmentId,
    range,
    staging_id: stagingId,
  });
  return extractSlice(
    job,
    { sessionId: session.sessionId, segmentId: segment.segmentId, start: segment.from, entries },
    stagingId,
  );
}

/**
 * Settles the marker of an extract a dead process (or an aborted pass) left: when its slice was
 * staged but the pointer never appended, the pointer is appended now (and returned) and the slice
 * is not extracted again; otherwise the marker is dropped and the slice is extracted as usual.
 */
async function settleInterrupted(
  job: MemoryJobOptions,
  session: ExtractSession,
): Promise<ExtractPointer | undefined> {
  const paths = memoryPaths(job.workspace);
  const marker = await readExtractMarker(paths, session.sessionId);
  if (marker === undefined) return undefined;
  const pointer = session.pointer() as Partial<ExtractPointer> | undefined;
  const moved = pointer?.segment_id === marker.segment_id && (pointer.next_entry ?? 0) > marker.range[0];
  let recovered: ExtractPointer | undefined;
  if (!moved && (await wasStaged(paths, marker.staging_id))) {
    recovered = { segment_id: marker.segment_id, next_entry: marker.range[1] + 1 };
    await session.appendPointer(recovered);
  }
  await removeExtractMarker(paths, session.sessionId);
  return recovered;
}
