import type { ErrorKind } from "@podkit/llm-worker";
import { hasMarker, PodkitPodError } from "../errors.js";
import type { OutputIssue } from "./output-schema.js";

const OUTPUT_VALIDATION_MARKER = Symbol.for("podkit.pod.error.output-validation");

/** Issues named in the message; all of them stay on `issues`. */
const ISSUES_SHOWN = 5;

/**
 * The run ended without an answer that matches the output schema: the model's last answer was
 * still invalid after `[output] max_repairs` error results listing the violations, or it refused.
 * Nothing of the answer is kept as the run's output; `raw` and `issues` say what it sent.
 */
export class OutputValidationError extends PodkitPodError {
  readonly [OUTPUT_VALIDATION_MARKER] = true;
  /** The model did not comply this time; another run may well (as with a compaction's summary). */
  override readonly errorKind: ErrorKind = "transient";
  override name = "OutputValidationError";
  /** The model's last answer as it sent it (parsed arguments or text), before any normalisation. */
  readonly raw: unknown;
  /** What is wrong with `raw`, each at a JSON Pointer into it. */
  readonly issues: readonly OutputIssue[];
  /** The model's refusal, when it declined to answer instead (a provider refusal, or its text). */
  readonly refusal: string | undefined;
  /** Error results the model was given before the run failed. */
  readonly repairs: number;

  constructor(
    details: { raw: unknown; issues: readonly OutputIssue[]; repairs: number; refusal?: string },
    options?: { cause?: unknown; hint?: string },
  ) {
    super(messageOf(details), {
      hint:
        options?.hint ??
        (details.refusal === undefined
          ? `try again; raise [output] max_repairs (the model got ${details.repairs} error result${details.repairs === 1 ? "" : "s"}), simplify the schema, or use a model that follows tool instructions ([model] ref); docs/output.md`
          : "the model declined to answer: change the input or the schema, or use another model ([model] ref); docs/output.md"),
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.raw = details.raw;
    this.issues = details.issues;
    this.refusal = details.refusal;
    this.repairs = details.repairs;
  }

  static override isInstance(error: unknown): error is OutputValidationError {
    return hasMarker(error, OUTPUT_VALIDATION_MARKER);
  }
}

function messageOf(details: { issues: readonly OutputIssue[]; repairs: number; refusal?: string }): string {
  if (details.refusal !== undefined) return `the model refused to give the typed answer: ${details.refusal}`;
  const after = `after ${details.repairs} repair${details.repairs === 1 ? "" : "s"}`;
  if (details.issues.length === 0) return `the model's answer does not match the output schema ${after}`;
  const shown = details.issues
    .slice(0, ISSUES_SHOWN)
    .map((issue) => `${issue.path || "(root)"}: ${issue.message}`);
  const more =
    details.issues.length > ISSUES_SHOWN ? `; and ${details.issues.length - ISSUES_SHOWN} more` : "";
  return `the model's answer does not match the output schema ${after}: ${shown.join("; ")}${more}`;
}
