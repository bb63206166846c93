import { type ErrorKind, errorKindOf } from "@podkit/llm-worker";
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

const EVAL_QUERY_MARKER = Symbol.for("podkit.pod.error.eval-query");
const EVAL_PRICES_MARKER = Symbol.for("podkit.pod.error.eval-prices");
const EVAL_JUDGE_MARKER = Symbol.for("podkit.pod.error.eval-judge");

/** A query over the store (`--where`, `{where}`) that cannot be run: names the filter and what is wrong. */
export class EvalQueryError extends PodkitPodError {
  readonly [EVAL_QUERY_MARKER] = true;
  override name = "EvalQueryError";
  /** The filter (`since`, `status`, …). */
  readonly key: string;

  constructor(key: string, problem: string, options?: { hint?: string }) {
    super(`eval query ${key}: ${problem}`, {
      hint:
        options?.hint ??
        "filters: since/until (2026-04-01, a date-time, or 7d / 12h back), status, tool, input, limit; docs/evals.md",
    });
    this.key = key;
  }

  static override isInstance(error: unknown): error is EvalQueryError {
    return hasMarker(error, EVAL_QUERY_MARKER);
  }
}

/** A price table (a `--prices` file, or `prices` in code) that cannot be read: names the file and the key. */
export class EvalPricesError extends PodkitPodError {
  readonly [EVAL_PRICES_MARKER] = true;
  override name = "EvalPricesError";
  readonly file: string | undefined;
  readonly key: string | undefined;

  constructor(
    location: { file?: string; key?: string },
    problem: string,
    options?: { cause?: unknown; hint?: string },
  ) {
    const where = [location.file, location.key === undefined ? undefined : `at ${location.key}`]
      .filter((part) => part !== undefined)
      .join(" ");
    super(`eval prices${where === "" ? "" : ` ${where}`}: ${problem}`, {
      hint:
        options?.hint ??
        'one table per model ref, USD per million tokens: ["anthropic/claude-sonnet-4-5"] input = 3, output = 15, cache_read = 0.3, cache_write = 3.75; docs/evals.md',
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.file = location.file;
    this.key = location.key;
  }

  static override isInstance(error: unknown): error is EvalPricesError {
    return hasMarker(error, EVAL_PRICES_MARKER);
  }
}

/**
 * A judge could not grade an item: its model failed, or it never gave a valid grade. The item fails
 * with it (it is not a score of 0); of its cause's kind (a provider's 5xx is `transient`).
 */
export class EvalJudgeError extends PodkitPodError {
  readonly [EVAL_JUDGE_MARKER] = true;
  override name = "EvalJudgeError";
  override readonly errorKind: ErrorKind;
  /** The judge scorer's name. */
  readonly judge: string;

  constructor(judge: string, problem: string, options?: { cause?: unknown; hint?: string }) {
    super(`judge ${judge}: ${problem}`, {
      hint:
        options?.hint ??
        hintOf(options?.cause) ??
        "check the judge's model (--judge-model) and its API key, then run the eval again",
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.judge = judge;
    this.errorKind = errorKindOf(options?.cause) ?? "transient";
  }

  static override isInstance(error: unknown): error is EvalJudgeError {
    return hasMarker(error, EVAL_JUDGE_MARKER);
  }
}

function hintOf(error: unknown): string | undefined {
  const hint = typeof error === "object" && error !== null ? (error as { hint?: unknown }).hint : undefined;
  return typeof hint === "string" ? hint : undefined;
}
