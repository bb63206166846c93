import type { RunError, RunFilter, RunInfo, RunState } from "@podkit/dispatch";
import type pg from "pg";
import { JobDataSchema, type JobOutput, outputOf } from "./job-data.js";

// Runs are read straight from pg-boss's job table (a read-only view of its own schema: `show` and
// `list` need one indexed statement, not a findJobs() per pod queue). The columns read exist in
// every pg-boss release since 10; the version is pinned exactly in package.json, and the tests
// run these statements against it.

/** pg-boss job states per run state (completed jobs split by their output). */
const ENGINE_STATES: Record<RunState, string> = {
  queued: "created",
  retrying: "retry",
  running: "active",
  completed: "completed",
  awaiting_approval: "completed",
  cancelled: "cancelled",
  dead: "failed",
};

const RUN_STATE_SQL = `CASE state
  WHEN 'created' THEN 'queued' WHEN 'retry' THEN 'retrying' WHEN 'active' THEN 'running'
  WHEN 'completed' THEN CASE WHEN output->>'state' = 'awaiting_approval' THEN 'awaiting_approval' ELSE 'completed' END
  WHEN 'cancelled' THEN 'cancelled' ELSE 'dead' END`;

interface RunRow {
  id: string;
  data: unknown;
  output: unknown;
  run_state: RunState;
  retry_count: number;
  retry_limit: number;
  created_on: Date;
  started_on: Date | null;
  completed_on: Date | null;
}

/** Where rows are read: the pool, or one transaction's connection (`inTransaction`). */
export interface Queryable {
  query(sql: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Runs matching `filter` (and `runId`), newest first. Jobs whose data is not a run are skipped. */
export async function selectRuns(
  pool: pg.Pool | Queryable,
  schema: string,
  filter: RunFilter & { runId?: string },
): Promise<RunInfo[]> {
  const where = ["name LIKE 'podkit.run.%'", "data->>'kind' = 'run'"];
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (filter.runId !== undefined) where.push(`id::text = ${param(filter.runId)}`);
  if (filter.sessionId !== undefined) where.push(`data->>'session_id' = ${param(filter.sessionId)}`);
  if (filter.pod !== undefined) where.push(`data->>'pod' = ${param(filter.pod)}`);
  const outer: string[] = [];
  if (filter.states !== undefined) {
    const engine = [...new Set(filter.states.map((state) => ENGINE_STATES[state]))];
    where.push(`state::text = ANY(${param(engine)}::text[])`);
    outer.push(`run_state = ANY(${param([...filter.states])}::text[])`);
  }
  const limit = param(Math.max(1, Math.min(filter.limit ?? 100, 10_000)));
  const sql = `SELECT * FROM (
      SELECT id::text, data, output, ${RUN_STATE_SQL} AS run_state, retry_count, retry_limit,
             created_on, started_on, completed_on
      FROM "${schema}".job WHERE ${where.join(" AND ")}
    ) runs ${outer.length > 0 ? `WHERE ${outer.join(" AND ")}` : ""}
    ORDER BY created_on DESC, id DESC LIMIT ${limit}`;
  const { rows } = (await pool.query(sql, values)) as { rows: RunRow[] };
  return rows.flatMap((row) => {
    const info = runInfoOf(row);
    return info === undefined ? [] : [info];
  });
}

function runInfoOf(row: RunRow): RunInfo | undefined {
  const data = JobDataSchema.safeParse(row.data);
  if (!data.success || data.data.kind !== "run") return undefined;
  const output = outputOf(row.output);
  const started = row.started_on !== null || row.retry_count > 0;
  const error = errorOf(output);
  return {
    runId: row.id,
    pod: data.data.pod,
    sessionId: data.data.session_id,
    input: { segmentId: data.data.input.segment_id, index: data.data.input.index },
    state: row.run_state,
    attempts: started ? row.retry_count + 1 : 0,
    maxAttempts: row.retry_limit + 1,
    submittedAt: row.created_on,
    ...(row.started_on === null ? {} : { startedAt: row.started_on }),
    ...(row.completed_on === null ? {} : { endedAt: row.completed_on }),
    ...(row.run_state === "completed" && output.result !== undefined ? { result: output.result } : {}),
    ...(row.run_state === "completed" && output.output !== undefined ? { output: output.output } : {}),
    ...(row.run_state !== "completed" && error !== undefined ? { error } : {}),
  };
}

/** The failure a job's output records: podkit's own, or pg-boss's (a lost heartbeat, a timeout). */
function errorOf(output: JobOutput): RunError | undefined {
  if (output.error !== undefined) return output.error;
  const message = output.value?.message ?? output.message;
  if (message === undefined) return undefined;
  if (/heartbeat/.test(message)) return { type: "LeaseExpired", message: `the worker's ${message}` };
  return { type: "EngineFailure", message };
}
