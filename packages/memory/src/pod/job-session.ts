import type { Item } from "@podkit/llm-worker";
import type { Entry } from "@podkit/session-store";
import type { ExtractSession } from "../extract/extract-pass.js";
import { EXTRACT_POINTER_DOMAIN } from "../extract/pointer.js";
import type { AfterTurnJobContext } from "./memory-job.js";

/**
 * The session of an after-turn pass as the extract sees it. Reads go through the store's
 * incremental read when the pod offers one (`readFrom`), else through a whole read that skips
 * the entries before `from`; pointers are appended through the pod's own writer.
 */
export function sessionOfContext(ctx: AfterTurnJobContext): ExtractSession {
  return {
    sessionId: ctx.sessionId,
    headSegmentId: ctx.segmentId,
    pointer: () => ctx.extension(EXTRACT_POINTER_DOMAIN),
    appendPointer: (pointer) => ctx.appendExtension(EXTRACT_POINTER_DOMAIN, pointer),
    readFrom: (segmentId, from) => readFrom(ctx, segmentId, from),
  };
}

async function* readFrom(
  ctx: AfterTurnJobContext,
  segmentId: string,
  from: number,
): AsyncIterable<Entry<Item>> {
  if (ctx.readFrom !== undefined) {
    for await (const batch of ctx.readFrom({ sessionId: ctx.sessionId, segmentId }, from)) yield* batch;
    return;
  }
  let index = 0;
  for await (const entry of ctx.readEntries(segmentId)) if (index++ >= from) yield entry;
}
