import { z } from "zod";
import { SourceSchema } from "../records/record-schema.js";

const topic = z
  .string()
  .min(1)
  .describe(
    "The subject in a short noun phrase (3-8 words); use the same phrase when the same subject comes up again",
  );
const text = (what: string) => z.string().min(1).describe(what);

export const ExtractedDecisionSchema = z.strictObject({
  topic,
  decision: text("What was chosen"),
  reason: text("Why: the rationale that makes it durable"),
});
export const ExtractedDiscussionSchema = z.strictObject({
  topic,
  summary: text("The question or trade-off and the positions taken"),
  settled: z.boolean().describe("True when it ended in a settled design or policy"),
});
export const ExtractedAttemptSchema = z.strictObject({
  topic,
  tried: text("What was tried"),
  observed: text("What was observed (result, error, measurement)"),
});
export const ExtractedRequestSchema = z.strictObject({
  topic,
  request: text("The user's standing request or preference, in their sense"),
});

/** The arguments of `write_extracted`: four lists, each possibly empty. Schema data only. */
export const WriteExtractedSchema = z.strictObject({
  decisions: z.array(ExtractedDecisionSchema),
  discussions: z.array(ExtractedDiscussionSchema),
  attempts: z.array(ExtractedAttemptSchema),
  requests: z.array(ExtractedRequestSchema),
});
export type Extracted = z.infer<typeof WriteExtractedSchema>;

/**
 * One file of `memory/_staging/<id>.json`: what one extract found, with the source attached by
 * code (the session, the segment and the entry range the extract read).
 */
export const StagingEntrySchema = WriteExtractedSchema.extend({
  id: z.string().min(1),
  created_at: z.string(),
  session_id: z.string().min(1),
  source: SourceSchema,
});
export type StagingEntry = z.infer<typeof StagingEntrySchema>;

/** True when an extract result holds nothing (then no staging file is written). */
export function isEmptyExtract(extracted: Extracted): boolean {
  return (
    extracted.decisions.length +
      extracted.discussions.length +
      extracted.attempts.length +
      extracted.requests.length ===
    0
  );
}
