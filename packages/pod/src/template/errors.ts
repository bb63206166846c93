import { isPodErrorNamed, PodkitPodError } from "../errors.js";

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

/** A template does not parse, or uses a construct the hardened environment refuses. */
export class TemplateSyntaxError extends PodkitPodError {
  override name = "TemplateSyntaxError";
  readonly template: string;
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;
  /** The problem alone, without the location. */
  readonly problem: string;

  constructor(problem: string, at: TemplateLocation, options?: { cause?: unknown }) {
    super(`template syntax error: ${problem} in ${formatLocation(at)}`, {
      cause: options?.cause,
      hint: "Fix the template source at that line (nunjucks/Jinja2 syntax).",
    });
    this.template = at.template;
    this.file = at.file;
    this.line = at.line;
    this.column = at.column;
    this.problem = problem;
  }

  static override isInstance(error: unknown): error is TemplateSyntaxError {
    return isPodErrorNamed(error, ["TemplateSyntaxError"]);
  }
}

/** Rendering failed: an undefined variable, a type error, a refused access, and so on. */
export class TemplateRenderError extends PodkitPodError {
  override name = "TemplateRenderError";
  readonly template: string;
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;
  readonly problem: string;
  /** For undefined values: the expression as written, e.g. `scope.ghost`. */
  readonly variable: string | undefined;

  constructor(problem: string, at: TemplateLocation, options?: { cause?: unknown; variable?: string }) {
    super(`template render error: ${problem} in ${formatLocation(at)}`, {
      cause: options?.cause,
      hint: options?.variable
        ? `Define \`${options.variable}\` or guard it with \`is defined\` / \`| default(…)\`.`
        : "Fix the template at that line.",
    });
    this.template = at.template;
    this.file = at.file;
    this.line = at.line;
    this.column = at.column;
    this.problem = problem;
    this.variable = options?.variable;
  }

  static override isInstance(error: unknown): error is TemplateRenderError {
    return isPodErrorNamed(error, ["TemplateRenderError"]);
  }
}

/**
 * Thrown by value helpers and filters that do not know where they run; the compiled node that
 * called them turns it into a `TemplateRenderError` with the template, line and column.
 */
export class TemplateValueError extends Error {
  override name = "TemplateValueError";
}
