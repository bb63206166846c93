import { RenderBudget, type RenderLimitName, type RenderLimits } from "./budget.js";
import { TemplateLimitError, TemplateRenderError } from "./errors.js";

/** A static `{% include %}` / `{% import %}` / `{% from %}` target, as written in the source. */
export interface TemplateReference {
  readonly ref: string;
  readonly kind: "include" | "import" | "from";
  readonly ignoreMissing: boolean;
  /** 1-based position of the tag. */
  readonly line: number;
  readonly column: number;
}

/** A template compiled once: its body is a tree of closures run against a `Scope`. */
export interface CompiledTemplate {
  readonly name: string;
  readonly source: string;
  /** Every template this one may pull in; all are literal strings, so the graph is static. */
  readonly references: readonly TemplateReference[];
  /** Number of syntax-tree nodes: what running the whole template once costs, in steps. */
  readonly weight: number;
  /** @internal Runs the body; called by the environment only. */
  readonly run: (scope: Scope) => string;
}

/** A compiled template plus the templates its references resolved to (for one loader). */
export interface LinkedTemplate {
  readonly name: string;
  readonly file: string | undefined;
  readonly compiled: CompiledTemplate;
  /** Reference as written → linked target; `null` for `ignore missing` targets that are absent. */
  readonly deps: ReadonlyMap<string, LinkedTemplate | null>;
}

/** Per-render bookkeeping shared by every scope of one render. */
export class RenderState {
  /** What the render has spent against its limits. */
  readonly budget: RenderBudget;
  /** Set when the watched attribute (or its whole container) was read outside `is defined`. */
  watchHit = false;

  constructor(
    limits: RenderLimits,
    readonly watchObject: object | null,
    readonly watchKey: string | null,
  ) {
    this.budget = new RenderBudget(limits);
  }

  /** Records a read of `key` on `target` (for "did the template use files.agents_md"). */
  noteAttributeRead(target: unknown, key: unknown): void {
    if (target === this.watchObject && key === this.watchKey) this.watchHit = true;
  }

  /** Records that `value` was consumed whole (iterated, filtered, printed). */
  noteWholeRead(value: unknown): void {
    if (value === this.watchObject && value !== null) this.watchHit = true;
  }
}

// Marks a name bound to `undefined` (a macro argument that was not passed), so lookups stop
// there instead of falling through to an outer variable of the same name.
const UNBOUND = Symbol("unbound");

/**
 * One level of variables: the render's data, a template's top level, a loop iteration, a macro
 * call. `set` writes to the innermost scope only (Jinja scoping); reads walk outwards.
 */
export class Scope {
  // Created on the first `set`: most scopes (loop iterations without variables) never need one.
  private vars: Map<string, unknown> | null = null;

  constructor(
    readonly parent: Scope | null,
    /** The template whose code runs in this scope (for includes and error locations). */
    readonly template: LinkedTemplate,
    readonly state: RenderState,
    /** Names visible after the whole chain: the environment's globals. */
    readonly globals: ReadonlyMap<string, unknown>,
  ) {}

  /** A nested scope running code of `template` (default: the same template). */
  child(template: LinkedTemplate = this.template): Scope {
    return new Scope(this, template, this.state, this.globals);
  }

  /** The value bound to `name` here or outwards, or `undefined`. */
  lookup(name: string): unknown {
    let scope: Scope | null = this;
    do {
      const value = scope.vars?.get(name);
      if (value !== undefined) return value === UNBOUND ? undefined : value;
      scope = scope.parent;
    } while (scope !== null);
    return this.globals.get(name);
  }

  set(name: string, value: unknown): void {
    this.vars ??= new Map();
    this.vars.set(name, value === undefined ? UNBOUND : value);
  }

  /** Names bound in this very scope, in binding order (for `{% import %}` exports). */
  ownEntries(): [string, unknown][] {
    return [...(this.vars ?? [])].map(([k, v]) => [k, v === UNBOUND ? undefined : v]);
  }

  /** A `TemplateRenderError` located in the template running in this scope. */
  error(problem: string, line: number, column: number, options?: { cause?: unknown; variable?: string }) {
    return new TemplateRenderError(
      problem,
      { template: this.template.name, file: this.template.file, line, column },
      options,
    );
  }

  /** A `TemplateLimitError` located in the template running in this scope. */
  limitError(problem: string, limit: RenderLimitName, line: number, column: number, cause?: unknown) {
    return new TemplateLimitError(
      problem,
      limit,
      { template: this.template.name, file: this.template.file, line, column },
      { cause },
    );
  }
}
