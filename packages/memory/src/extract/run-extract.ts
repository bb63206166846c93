import { defineTool, type Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import { MemoryWorkerError } from "../errors.js";
import { memoryPaths } from "../records/layout.js";
import { formatTimestamp } from "../records/record-schema.js";
import { runDisposableWorker } from "../worker/disposable-worker.js";
import type { MemoryJobOptions } from "../worker/memory-model.js";
import { type Extracted, isEmptyExtract, type StagingEntry, WriteExtractedSchema } from "./extract-schema.js";
import { flattenEntries } from "./flat-lines.js";
import type { ExtractPointer } from "./pointer.js";
import { writeStagingEntry } from "./staging.js";

/** The part of a session an extract reads: entries `start`… of one segment. */
export interface ExtractSlice {
  readonly sessionId: string;
  readonly segmentId: string;
  /** Index of `entries[0]` in the segment. */
  readonly start: number;
  readonly entries: readonly Entry<Item>[];
}

/** What one extract did; `pointer` is where the next one starts (commit it only now, on success). */
export type ExtractOutcome =
  | { status: "extracted"; staging: StagingEntry; pointer: ExtractPointer }
  | { status: "empty"; range: [number, number]; pointer: ExtractPointer }
  | { status: "nothing_new"; pointer: ExtractPointer };

/** Requests an extract worker may make (the answer, plus room for fixing rejected arguments). */
const EXTRACT_MAX_REQUESTS = 4;

/**
 * Extract: the slice as flat lines goes to a disposable worker with the catalog's
 * `memory_extract_system` and the single tool `write_extracted`. A non-empty result becomes a
 * staging file with the source attached by code; an empty one writes nothing. Either way the
 * caller advances the pointer; on any failure (`MemoryWorkerError`) it must not.
 */
export async function extractSlice(
  options: MemoryJobOptions,
  slice: ExtractSlice,
  stagingId?: string,
): Promise<ExtractOutcome> {
  const end = slice.start + slice.entries.length - 1;
  const pointer: ExtractPointer = { segment_id: slice.segmentId, next_entry: end + 1 };
  const input = flattenEntries(slice.entries);
  if (input === "") return { status: "nothing_new", pointer };
  let extracted: Extracted | undefined;
  const writeExtracted = defineTool({
    name: "write_extracted",
    description:
      "Record what this session slice contains for memory: decisions, discussions, attempts and requests. Call it exactly once; empty lists are a valid answer.",
    inputSchema: WriteExtractedSchema,
    execute: (args) => {
      extracted = args;
      const n = args.decisions.length + args.discussions.length + args.attempts.length + args.requests.length;
      return { summary: `recorded ${n} item${n === 1 ? "" : "s"}; you are done` };
    },
  });
  await runDisposableWorker("extract", options, {
    systemPrompt: options.prompts.render("memory_extract_system", { language: options.language }),
    tools: [writeExtracted],
    input,
    maxRequests: EXTRACT_MAX_REQUESTS,
  });
  if (extracted === undefined) {
    throw new MemoryWorkerError(
      "extract",
      "the memory extract worker ended without calling write_extracted; the slice will be extracted again next time",
    );
  }
  const range: [number, number] = [slice.start, end];
  if (isEmptyExtract(extracted)) return { status: "empty", range, pointer };
  const staging = await writeStagingEntry(
    memoryPaths(options.workspace),
    {
      created_at: formatTimestamp((options.clock ?? (() => new Date()))()),
      session_id: slice.sessionId,
      source: { segment_id: slice.segmentId, range },
      ...extracted,
    },
    stagingId,
  );
  return { status: "extracted", staging, pointer };
}
