import { z } from "zod";

/** The session-log `extension` domain of the extract pointer. */
export const EXTRACT_POINTER_DOMAIN = "memory.extract";

/** Where the next extract starts: the segment and the index of its first entry not yet extracted. */
export const ExtractPointerSchema = z.object({ segment_id: z.string().min(1), next_entry: z.int().min(0) });
export type ExtractPointer = z.infer<typeof ExtractPointerSchema>;

/**
 * The first entry to extract in `segmentId`. A pointer of another segment (the session was
 * compacted or forked since) resets to the new segment's first entry after its `segment_start`,
 * whose carried-over history was already covered in the segment it came from.
 */
export function extractStart(pointer: unknown, segmentId: string): number {
  const parsed = ExtractPointerSchema.safeParse(pointer);
  if (!parsed.success || parsed.data.segment_id !== segmentId) return 1;
  return Math.max(1, parsed.data.next_entry);
}
