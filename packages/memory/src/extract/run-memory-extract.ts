import type { Item } from "@podkit/llm-worker";
import { type Entry, SessionLog, type Store } from "@podkit/session-store";
import type { MemoryJobOptions } from "../worker/memory-model.js";
import { estimateTokens } from "./flat-lines.js";
import { EXTRACT_POINTER_DOMAIN, extractStart } from "./pointer.js";
import { type ExtractOutcome, extractSlice } from "./run-extract.js";

export interface RunMemoryExtractOptions extends MemoryJobOptions {
  /** The session store holding the session (the CLI opens the manifest's). */
  readonly sessions: Store<Item>;
  readonly sessionId: string;
  /** Extract only when the slice holds at least this many tokens (default 0: whenever there is something new). */
  readonly threshold?: number;
}

export type MemoryExtractResult =
  | (ExtractOutcome & { tokens: number })
  | { status: "below_threshold"; tokens: number; threshold: number };

/**
 * `podkit memory extract`: extracts a session's head segment from its pointer on, writes the
 * staging file, and appends the advanced pointer (`extension` entry, domain `memory.extract`) to
 * the session log — only on success; a failure leaves the pointer and the same range is
 * extracted next time. Do not run it on a session a pod is writing: a pod extracts its own.
 */
export async function runMemoryExtract(options: RunMemoryExtractOptions): Promise<MemoryExtractResult> {
  const log = await SessionLog.open(options.sessions, options.sessionId);
  const { segmentId } = log.state;
  const start = extractStart(log.state.extensions.get(EXTRACT_POINTER_DOMAIN), segmentId);
  const entries: Entry<Item>[] = [];
  let index = 0;
  for await (const entry of options.sessions.readAll({ sessionId: options.sessionId, segmentId })) {
    if (index++ >= start) entries.push(entry);
  }
  const tokens = estimateTokens(entries);
  const threshold = options.threshold ?? 0;
  if (tokens < threshold || entries.length === 0) {
    return { status: "below_threshold", tokens, threshold };
  }
  const outcome = await extractSlice(options, { sessionId: options.sessionId, segmentId, start, entries });
  await log.append(
    { kind: "extension", domain: EXTRACT_POINTER_DOMAIN, payload: outcome.pointer },
    options.signal === undefined ? {} : { signal: options.signal },
  );
  return { ...outcome, tokens };
}
