import type { Entry, EntryOf } from "@podkit/session-store";
import { z } from "zod";

/**
 * The `extension` domain of a dispatched run's entries in its session log — the run's only
 * journal. "submitted" holds the input (written before the run is enqueued); "started" marks each
 * attempt just before it hands the input (or a resume) to the pod; "ended" records how it ended.
 */
export const RUN_DOMAIN = "dispatch.run";

const runId = z.string().min(1).max(200);

const submittedSchema = z.strictObject({
  run_id: runId,
  event: z.literal("submitted"),
  /** The user input; null continues the session without new input (resume). */
  input: z.string().nullable(),
  key: z.string().optional(),
  /** The schedule this run was fired by. */
  schedule: z.string().optional(),
});

const startedSchema = z.strictObject({
  run_id: runId,
  event: z.literal("started"),
  attempt: z.int().min(1),
  /** `host:pid` of the worker, for `podkit runs show`. */
  worker: z.string(),
  /** The attempt continues a run whose input was already committed: it resumes instead. */
  resumes: z.boolean(),
});

const endedSchema = z.strictObject({
  run_id: runId,
  event: z.literal("ended"),
  state: z.enum(["completed", "awaiting_approval", "cancelled", "failed"]),
  result: z.string().optional(),
  /**
   * The run's typed answer (docs/output.md), repeated from its `final_output` entry so the run's
   * journal alone says what it returned, and an attempt that died before settling settles with it.
   */
  output: z.unknown().optional(),
  error: z.strictObject({ type: z.string(), message: z.string() }).optional(),
});

/** One `dispatch.run` payload, validated: log entries are untrusted when read back. */
export const RunEntrySchema = z.discriminatedUnion("event", [submittedSchema, startedSchema, endedSchema]);
export type RunEntry = z.infer<typeof RunEntrySchema>;
export type SubmittedEntry = z.infer<typeof submittedSchema>;
export type EndedEntry = z.infer<typeof endedSchema>;

/** The `extension` entry carrying `payload`, stamped `ts`. */
export function runEntry<TItem>(payload: RunEntry, ts: number): EntryOf<"extension", TItem> {
  return { kind: "extension", ts, domain: RUN_DOMAIN, payload };
}

/**
 * The run entry an `extension` entry carries, or undefined for any other entry (and for a
 * `dispatch.run` entry of the wrong shape, which `parseRunEntry` reports instead).
 */
export function runEntryOf(entry: Entry<unknown>): RunEntry | undefined {
  if (entry.kind !== "extension" || entry.domain !== RUN_DOMAIN) return undefined;
  const parsed = RunEntrySchema.safeParse(entry.payload);
  return parsed.success ? parsed.data : undefined;
}

/** Parses a `dispatch.run` payload; the message of a failure names the problem fields. */
export function parseRunEntry(
  entry: Entry<unknown>,
): { ok: true; entry: RunEntry } | { ok: false; problem: string } {
  if (entry.kind !== "extension" || entry.domain !== RUN_DOMAIN) {
    return { ok: false, problem: `it is a "${entry.kind}" entry, not a ${RUN_DOMAIN} extension entry` };
  }
  const parsed = RunEntrySchema.safeParse(entry.payload);
  if (parsed.success) return { ok: true, entry: parsed.data };
  const problem = parsed.error.issues.map(
    (issue) => `${issue.path.join(".") || "payload"}: ${issue.message}`,
  );
  return { ok: false, problem: problem.join("; ") };
}
