import { z } from "zod";

/** The session-log `extension` domain of the extract pointer. */
export const EXTRACT_POINTER_DOMAIN = "memory.extract";

/** Where the next extract starts: the segment and the index of its first entry not yet extracted. */
export const ExtractPointerSchema = z.object({ segment_id: z.string().min(1), next_entry: z.int().min(0) });
export type ExtractPointer = z.infer<typeof ExtractPointerSchema>;
