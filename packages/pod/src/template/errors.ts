import type { ErrorKind } from "@podkit/llm-worker";
import { hasMarker, PodkitPodError } from "../errors.js";
import type { RenderLimitName } from "./budget.js";

/** Where in which template something went wrong; lines and columns are 1-based. */
export interface TemplateLocation {
  /** The template's name: a canonical `$prefix/…` ref for files, a descriptive label otherwise. */
  readonly template: string;
  /** Absolute path of the file the template was read from, when it came from a file. */
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;
}

/** `"$workspace/x.md" (/abs/.podkit/prompts/x.md), line 3, column 5` */
export function formatLocation(at: TemplateLocation): string {
  const file = at.file && at.file !== at.template ? ` (${at.file})` : "";
  return `${at.template}${file}, line ${at.line}, column ${at.column}`;
}

const SYNTAX_MARKER = Symbol.for("podkit.pod.error.template-syntax");

/** A template does not parse, or uses a construct the hardened environment refuses. */
export class TemplateSyntaxError extends PodkitPodError {
  readonly [SYNTAX_MARKER] = true;
  override name = "TemplateSyntaxError";
  readonly template: string;
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;
  /** The problem alone, without the location. */
  readonly problem: string;

  constructor(problem: string, at: TemplateLocation, options?: { cause?: unknown; hint?: string }) {
    super(`template syntax error: ${problem} in ${formatLocation(at)}`, {
      cause: options?.cause,
      hint: options?.hint ?? "Fix the template source at that line (nunjucks/Jinja2 syntax).",
    });
    this.template = at.template;
    this.file = at.file;
    this.line = at.line;
    this.column = at.column;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is TemplateSyntaxError {
    return hasMarker(error, SYNTAX_MARKER);
  }
}

const RENDER_MARKER = Symbol.for("podkit.pod.error.template-render");

/** Rendering failed: an undefined variable, a type error, a refused access, and so on. */
export class TemplateRenderError extends PodkitPodError {
  readonly [RENDER_MARKER] = true;
  override name = "TemplateRenderError";
  readonly template: string;
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;
  readonly problem: string;
  /** For undefined and unprintable values: the expression as written, e.g. `scope.ghost`. */
  readonly variable: string | undefined;

  constructor(
    problem: string,
    at: TemplateLocation,
    options?: { cause?: unknown; variable?: string; hint?: string },
  ) {
    super(`template render error: ${problem} in ${formatLocation(at)}`, {
      cause: options?.cause,
      hint:
        options?.hint ??
        (options?.variable
          ? `Define \`${options.variable}\` or guard it with \`is defined\` / \`| default(…)\`.`
          : "Fix the template at that line."),
    });
    this.template = at.template;
    this.file = at.file;
    this.line = at.line;
    this.column = at.column;
    this.problem = problem;
    this.variable = options?.variable;
  }

  static override isInstance(error: unknown): error is TemplateRenderError {
    return hasMarker(error, RENDER_MARKER);
  }
}

const UNPRINTABLE_MARKER = Symbol.for("podkit.pod.error.template-unprintable-value");

/** A value without a text form: a list, a mapping, or a host object such as a `cycler`. */
export type UnprintableType = "list" | "mapping" | "object";

/**
 * A template printed a list, a mapping or a host object (`{{ scope }}`, `{{ tools }}`, `| string`,
 * `~`). None has a text form a prompt could use (`[object Object]`, a bare comma list), so the
 * render stops instead of putting one in the prompt. Also a `TemplateRenderError`; `variable`
 * names the expression as written when the printed value is one the template wrote.
 */
export class TemplateUnprintableValueError extends TemplateRenderError {
  readonly [UNPRINTABLE_MARKER] = true;
  override name = "TemplateUnprintableValueError";
  /** What was printed. */
  readonly valueType: UnprintableType;

  constructor(
    problem: string,
    valueType: UnprintableType,
    at: TemplateLocation,
    options?: { cause?: unknown; variable?: string; hint?: string },
  ) {
    super(problem, at, {
      ...options,
      hint:
        options?.hint ??
        'Print one of its fields or items, or turn it into text with a filter such as `join(", ")` or `tojson`.',
    });
    this.valueType = valueType;
  }

  static override isInstance(error: unknown): error is TemplateUnprintableValueError {
    return hasMarker(error, UNPRINTABLE_MARKER);
  }
}

const LIMIT_MARKER = Symbol.for("podkit.pod.error.template-limit");

/**
 * A render exceeded one of its limits (steps, value length, output length, total produced,
 * nesting depth). Also a `TemplateRenderError`, naming the template and line that hit it.
 */
export class TemplateLimitError extends TemplateRenderError {
  readonly [LIMIT_MARKER] = true;
  override name = "TemplateLimitError";
  readonly limit: RenderLimitName;

  constructor(problem: string, limit: RenderLimitName, at: TemplateLocation, options?: { cause?: unknown }) {
    super(problem, at, {
      cause: options?.cause,
      hint: "The template does far more work than a prompt needs (a runaway loop, recursion or doubling?); simplify it. The limits are listed in docs/prompts.md.",
    });
    this.limit = limit;
  }

  static override isInstance(error: unknown): error is TemplateLimitError {
    return hasMarker(error, LIMIT_MARKER);
  }
}

const ENGINE_MARKER = Symbol.for("podkit.pod.error.template-engine-version");

/** The installed nunjucks is not the exact version whose parser the template engine was built on. */
export class TemplateEngineVersionError extends PodkitPodError {
  readonly [ENGINE_MARKER] = true;
  /** This installation lacks the nunjucks the engine needs; another may have it. */
  override readonly errorKind: ErrorKind = "unsupported";
  override name = "TemplateEngineVersionError";
  readonly expected: string;
  readonly found: string;

  constructor(expected: string, found: string) {
    super(
      `@podkit/pod needs nunjucks ${expected} exactly (its template engine uses nunjucks' private parser modules), but nunjucks ${found} is installed`,
      {
        hint: `Install nunjucks ${expected} (the exact version @podkit/pod depends on); do not override it.`,
      },
    );
    this.expected = expected;
    this.found = found;
  }

  static override isInstance(error: unknown): error is TemplateEngineVersionError {
    return hasMarker(error, ENGINE_MARKER);
  }
}

/**
 * Thrown by value helpers and filters that do not know where they run; the compiled node that
 * called them turns it into a `TemplateRenderError` with the template, line and column.
 */
export class TemplateValueError extends Error {
  override name = "TemplateValueError";
}

/**
 * Thrown by `toText` for a value that has no text form (a list, mapping or host object); the
 * compiled node that printed it turns it into a `TemplateUnprintableValueError` naming the
 * expression it came from.
 */
export class UnprintableValue extends TemplateValueError {
  override name = "UnprintableValue";

  constructor(
    readonly value: object,
    readonly valueType: UnprintableType,
    /** The filter or operator that tried to turn it into text: `filter 'string'`, `~`. */
    readonly via?: string,
  ) {
    super(`cannot print ${withArticle(valueType)}${via ? ` with ${via}` : ""}`);
  }

  /** The same refusal, noted as made by `via` (the first one noted is kept). */
  within(via: string): UnprintableValue {
    return this.via ? this : new UnprintableValue(this.value, this.valueType, via);
  }
}

/** `a list`, `a mapping`, `an object`. */
export function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`;
}
