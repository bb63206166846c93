import { hasMarker, PodkitPodError } from "../errors.js";

const EVAL_CASE_MARKER = Symbol.for("podkit.pod.error.eval-case");
const EVAL_DATASET_MARKER = Symbol.for("podkit.pod.error.eval-dataset");

/**
 * An eval case cannot be run as given: its session is not in the store, its turn range is empty
 * or outside the session, or it names no input. Names the case; nothing of the eval was lost.
 */
export class EvalCaseError extends PodkitPodError {
  readonly [EVAL_CASE_MARKER] = true;
  override name = "EvalCaseError";
  /** The case as the caller named it (`<session>` or `<session>:<from>-<to>`, or `input #n`). */
  readonly caseName: string;

  constructor(caseName: string, problem: string, options?: { cause?: unknown; hint?: string }) {
    super(`eval case ${caseName}: ${problem}`, {
      hint:
        options?.hint ??
        "list the recorded sessions with `podkit session list` and their turns with `podkit session show <id>`",
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.caseName = caseName;
  }

  static override isInstance(error: unknown): error is EvalCaseError {
    return hasMarker(error, EVAL_CASE_MARKER);
  }
}

/** A dataset file (JSON or JSON Lines) that cannot be read as a list of eval cases: names file, line and key. */
export class EvalDatasetError extends PodkitPodError {
  readonly [EVAL_DATASET_MARKER] = true;
  override name = "EvalDatasetError";
  readonly file: string;
  /** 1-based line of a JSON Lines file (or of the JSON file's error), when known. */
  readonly line: number | undefined;

  constructor(
    location: { file: string; line?: number; key?: string },
    problem: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    const where = `${location.file}${location.line === undefined ? "" : `:${location.line}`}`;
    const key = location.key === undefined || location.key === "" ? "" : ` at ${location.key}`;
    super(`eval dataset ${where}${key}: ${problem}`, {
      hint:
        options?.hint ??
        'each case is {"session": "<id>", "from_turn"?: n, "to_turn"?: n} or {"input": "…" | ["…"], "expected"?: …}; docs/evals.md',
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.file = location.file;
    this.line = location.line;
  }

  static override isInstance(error: unknown): error is EvalDatasetError {
    return hasMarker(error, EVAL_DATASET_MARKER);
  }
}
