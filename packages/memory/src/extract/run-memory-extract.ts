import type { Item } from "@podkit/llm-worker";
import { type Entry, SessionLog, type Store } from "@podkit/session-store";
import type { MemoryJobOptions } from "../worker/memory-model.js";
import { type ExtractPassResult, runExtractPass } from "./extract-pass.js";
import type { StagingEntry } from "./extract-schema.js";
import { EXTRACT_POINTER_DOMAIN, type ExtractPointer } from "./pointer.js";

export interface RunMemoryExtractOptions extends MemoryJobOptions {
  /** The session store holding the session (the CLI opens the manifest's). */
  readonly sessions: Store<Item>;
  readonly sessionId: string;
  /** Extract only when the head's new entries hold at least this many tokens (default 0: whenever there is something new). */
  readonly threshold?: number;
}

/** What `runMemoryExtract` did; `staged` lists every staging entry written (tails first), `staging` the last. */
export type MemoryExtractResult =
  | { status: "extracted"; staging: StagingEntry; staged: StagingEntry[]; tokens: number }
  | { status: "empty"; range: [number, number]; pointer: ExtractPointer; tokens: number }
  | { status: "nothing_new"; tokens: number }
  | { status: "below_threshold"; tokens: number; threshold: number };

function summarize(pass: ExtractPassResult): MemoryExtractResult {
  const staged = pass.outcomes.flatMap((o) => (o.status === "extracted" ? [o.staging] : []));
  const last = staged.at(-1);
  if (last !== undefined) return { status: "extracted", staging: last, staged, tokens: pass.tokens };
  if (pass.belowThreshold !== undefined) return { status: "below_threshold", ...pass.belowThreshold };
  const empty = pass.outcomes.findLast((o) => o.status === "empty");
  if (empty?.status === "empty")
    return { status: "empty", range: empty.range, pointer: empty.pointer, tokens: pass.tokens };
  return { status: "nothing_new", tokens: pass.tokens };
}

/**
 * `podkit memory extract`: one extract pass over a session (see `runExtractPass`): tails that
 * compaction left behind, then the head segment from its pointer on. Staging files are written
 * and the advanced pointer (`extension` entry, domain `memory.extract`) appended to the session
 * log only on success; a failure leaves the pointer and the same range is extracted next time.
 * Do not run it on a session a pod is writing: a pod extracts its own.
 */
export async function runMemoryExtract(options: RunMemoryExtractOptions): Promise<MemoryExtractResult> {
  const log = await SessionLog.open(options.sessions, options.sessionId);
  const { sessionId } = log.state;
  const pass = await runExtractPass(
    options,
    {
      sessionId,
      headSegmentId: log.state.segmentId,
      pointer: () => log.state.extensions.get(EXTRACT_POINTER_DOMAIN),
      appendPointer: async (pointer) => {
        await log.append(
          { kind: "extension", domain: EXTRACT_POINTER_DOMAIN, payload: pointer },
          options.signal === undefined ? {} : { signal: options.signal },
        );
      },
      readFrom: (segmentId, from) => skipTo(options.sessions.readAll({ sessionId, segmentId }), from),
    },
    { threshold: options.threshold ?? 0 },
  );
  return summarize(pass);
}

async function* skipTo(entries: AsyncIterable<Entry<Item>>, from: number): AsyncIterable<Entry<Item>> {
  let index = 0;
  for await (const entry of entries) if (index++ >= from) yield entry;
}
