import type { Entry } from "../../src/entry/entry-schema.js";
import type { SegmentRef } from "../../src/store/store.js";

/** The `segment_start` of an empty v2 segment `ref`, as the store tests create one. */
export function segmentHead(ref: SegmentRef, systemPrompt: string | null = "p"): Entry {
  return {
    kind: "segment_start",
    ts: 1,
    v: 2,
    session_id: ref.sessionId,
    segment_id: ref.segmentId,
    system_prompt: systemPrompt,
    config: {},
    history: [],
  };
}
