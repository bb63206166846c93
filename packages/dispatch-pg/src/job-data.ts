import { createHash } from "node:crypto";
import type { RunJob } from "@podkit/dispatch";
import { z } from "zod";

/** The dead-letter queue every pod queue hands its exhausted runs to (pg-boss copies them there). */
export const DEAD_LETTER_QUEUE = "podkit.dead";

/**
 * The pg-boss queue of a pod's runs. pg-boss queue names allow letters, digits, `_ - . /`; a pod
 * name with anything else is encoded (readably when it can be, by hash otherwise), so any
 * `[pod] name` gets a queue of its own.
 */
export function queueOf(pod: string): string {
  if (/^[\w.-]{1,100}$/.test(pod)) return `podkit.run.${pod}`;
  return `podkit.run.x-${createHash("sha256").update(pod).digest("hex").slice(0, 32)}`;
}

/** Whether a pg-boss queue name is a podkit run queue. */
export function isRunQueue(name: string): boolean {
  return name.startsWith("podkit.run.");
}

// What a job carries: ids and an offset for a run, a schedule name for a firing — never a prompt.
// Read back from the database, a job is untrusted: it is validated before anything uses it.
const runData = z.strictObject({
  kind: z.literal("run"),
  run_id: z.string().min(1),
  pod: z.string().min(1),
  session_id: z.string().min(1),
  input: z.strictObject({ segment_id: z.string().min(1), index: z.int().min(0) }),
});

const firingData = z.strictObject({
  kind: z.literal("firing"),
  pod: z.string().min(1),
  schedule: z.string().min(1),
});

export const JobDataSchema = z.discriminatedUnion("kind", [runData, firingData]);
export type JobData = z.infer<typeof JobDataSchema>;
export type RunData = z.infer<typeof runData>;

/** The data of a run's job: its ids and the offset of its input entry. */
export function runJobData(job: RunJob): JobData {
  return {
    kind: "run",
    run_id: job.runId,
    pod: job.pod,
    session_id: job.sessionId,
    input: { segment_id: job.input.segmentId, index: job.input.index },
  };
}

/** What a settled job's `output` holds: how the attempt ended (pg-boss keeps it with the job). */
const OutputSchema = z.object({
  state: z.enum(["completed", "awaiting_approval"]).optional(),
  result: z.string().optional(),
  /** The run's typed answer (docs/output.md), when its pod has an output schema. */
  output: z.unknown().optional(),
  error: z.object({ type: z.string(), message: z.string() }).optional(),
  // pg-boss's own failures ("job heartbeat timeout", "job timed out") are `{ value: { message } }`.
  value: z.object({ message: z.string() }).optional(),
  message: z.string().optional(),
});
export type JobOutput = z.infer<typeof OutputSchema>;

/** A job's `output`, validated; anything else reads as empty. */
export function outputOf(value: unknown): JobOutput {
  const parsed = OutputSchema.safeParse(value);
  return parsed.success ? parsed.data : {};
}
