import type { RunStatus } from "../entry/entry-schema.js";

/**
 * How a turn stands in the log — the one vocabulary of a turn's and a session's state that the
 * CLI, the server, the viewer and the dispatcher all read: the run status its `run_completed`
 * recorded (`finished`, `paused`, `limit_reached`, `yielded`, `awaiting_approval`,
 * `budget_exhausted`), `errored` for a `run_errored`, and `open` while no terminal entry follows
 * its `invoke` (it runs now, or its process died in it).
 */
export type TurnStatus = RunStatus | "errored" | "open";

/** How a session stands: its head's latest turn's status, or `idle` before any turn. */
export type SessionStatus = TurnStatus | "idle";
