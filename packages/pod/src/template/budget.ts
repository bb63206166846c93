import { TemplateValueError } from "./errors.js";

/**
 * What one render may spend. Nothing a template does gets around these: every loop, call,
 * include, filter and operator is charged before (or, when the cost is only known after,
 * right after) it runs, so a hostile template fails with a `TemplateLimitError` in bounded
 * time and memory. The defaults are far above what real prompts use (see docs/prompts.md).
 */
export interface RenderLimits {
  /**
   * Work of one render, in steps: a loop iteration, macro or `caller` call, include or import
   * costs `CALL_STEPS` plus the number of template nodes it runs; a filter, test, function or
   * operator costs one plus one per list item or character it reads (filters that match or
   * split words, such as `title` or `wordcount`, cost `HEAVY_TEXT_STEPS` per character).
   */
  readonly maxSteps: number;
  /** Longest string (characters) or list (items) any operator, filter or function may produce. */
  readonly maxLength: number;
  /** Longest text a render may output (also the text of any block, macro body or include). */
  readonly maxOutput: number;
  /** Characters and list items all operators, filters and functions of one render may produce together. */
  readonly maxProduced: number;
  /** How deep includes, imports and macro calls may nest. */
  readonly maxDepth: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = Object.freeze({
  maxSteps: 5_000_000,
  maxLength: 1_000_000,
  maxOutput: 2_000_000,
  maxProduced: 20_000_000,
  maxDepth: 100,
});

/** Steps a loop iteration, macro call, include or import costs besides the nodes it runs. */
export const CALL_STEPS = 2;

/** Longest template source (characters) that is compiled at all: parsing time grows with it. */
export const MAX_TEMPLATE_SOURCE = 1_000_000;

/** How deep a template's syntax tree may nest (checked at compile time, before any recursion). */
export const MAX_TEMPLATE_NESTING = 200;

/** How deep a list or mapping may nest when it is compared or serialized. */
export const MAX_VALUE_NESTING = 100;

/** Which limit was exceeded. `nesting` is the compile-time syntax-tree limit. */
export type RenderLimitName = "steps" | "length" | "output" | "produced" | "depth" | "nesting";

/** A limit was exceeded; the compiled node that ran the operation adds template and line. */
export class LimitExceeded extends TemplateValueError {
  constructor(
    readonly limit: RenderLimitName,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Steps per character of text filters that run a regular expression or a callback per word
 * (`title`, `wordcount`, `replace`, …): they take up to a few hundred nanoseconds per character,
 * where copying or case-mapping takes a few.
 */
export const HEAVY_TEXT_STEPS = 4;

/** The steps reading `value` costs: its items or characters. */
export function workOf(value: unknown): number {
  if (typeof value === "string" || Array.isArray(value)) return value.length;
  return 0;
}

/** The spending of one render against its `RenderLimits`. */
export class RenderBudget {
  steps = 0;
  produced = 0;
  /** Current nesting of includes, imports and macro calls. */
  depth = 0;

  constructor(readonly limits: RenderLimits) {}

  /** Charges `n` steps. */
  step(n: number): void {
    this.steps += n;
    if (this.steps > this.limits.maxSteps) {
      throw new LimitExceeded(
        "steps",
        `the render exceeded its budget of ${this.limits.maxSteps} steps (loop iterations, macro calls, includes and filter work)`,
      );
    }
  }

  /** Charges the work of reading `value` (one step plus its size). */
  read(value: unknown): void {
    this.step(1 + workOf(value));
  }

  /** Charges reading `chars` characters, `perChar` steps each. */
  readChars(chars: number, perChar = 1): void {
    this.step(1 + chars * perChar);
  }

  /**
   * Checks, before building it, that a result of `length` characters or items is allowed, and
   * counts it as produced. `what` names the operation in the message.
   */
  reserve(length: number, what: string): void {
    if (length > this.limits.maxLength) {
      throw new LimitExceeded(
        "length",
        `${what} would produce ${length} characters or items; values may hold at most ${this.limits.maxLength}`,
      );
    }
    this.produced += length;
    if (this.produced > this.limits.maxProduced) {
      throw new LimitExceeded(
        "produced",
        `the render produced more than ${this.limits.maxProduced} characters and list items in total`,
      );
    }
  }

  /** Checks and counts a value an operation just produced; returns it. */
  result<T>(value: T, what: string): T {
    if (typeof value === "string" || Array.isArray(value)) this.reserve(value.length, what);
    return value;
  }

  /** Checks the length of text a block has output so far. */
  output(length: number): void {
    if (length > this.limits.maxOutput) throw this.outputExceeded();
  }

  /** The error for text that outgrew `maxOutput` (for callers that locate it themselves). */
  outputExceeded(): LimitExceeded {
    return new LimitExceeded("output", `the rendered text grew beyond ${this.limits.maxOutput} characters`);
  }

  /** Enters one level of include, import or macro call; `what` and `why` go into the message. */
  enter(what: string, why = ""): void {
    if (this.depth >= this.limits.maxDepth) {
      throw new LimitExceeded("depth", `${what} nest deeper than ${this.limits.maxDepth} levels${why}`);
    }
    this.depth++;
  }

  leave(): void {
    this.depth--;
  }
}

/** Guards recursive walks over values (comparing, serializing). */
export function checkValueNesting(depth: number): void {
  if (depth > MAX_VALUE_NESTING) {
    throw new LimitExceeded("depth", `a list or mapping nests deeper than ${MAX_VALUE_NESTING} levels`);
  }
}
