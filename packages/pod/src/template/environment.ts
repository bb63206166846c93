import { DEFAULT_RENDER_LIMITS, MAX_TEMPLATE_SOURCE, type RenderLimits } from "./budget.js";
import { compileBlock } from "./compile-statements.js";
import { asRenderErrorAt, CompilerContext } from "./compile-support.js";
import { TemplateRenderError, TemplateSyntaxError } from "./errors.js";
import { TEMPLATE_GLOBALS } from "./globals.js";
import { ParseFailure, parseTemplateSource } from "./nunjucks-parser.js";
import { type CompiledTemplate, type LinkedTemplate, RenderState, Scope } from "./scope.js";
import { freezeTemplateData } from "./template-data.js";
import { isPlainObject } from "./values.js";

/** Options of one render. */
export interface RenderOptions {
  /**
   * Report whether the template used `variable.attribute` (read it outside `is defined`, or
   * consumed the whole `variable` through a loop or filter). Used for `files.agents_md`.
   */
  readonly watch?: { readonly variable: string; readonly attribute: string };
}

export interface RenderResult {
  readonly text: string;
  /** Whether the watched attribute was used (always false without `watch`). */
  readonly watchedRead: boolean;
}

/**
 * Jinja's source normalisation: newlines become `\n`, and one trailing newline is dropped
 * (`keep_trailing_newline = False`), so an included file does not add a stray blank line.
 */
export function normalizeTemplateSource(source: string): string {
  const unified = source.includes("\r") ? source.replace(/\r\n?/g, "\n") : source;
  return unified.endsWith("\n") ? unified.slice(0, -1) : unified;
}

/**
 * The one template environment of podkit: nunjucks syntax (its lexer and parser, pinned
 * 3.2.4), compiled by podkit into closures with strict-undefined and sandbox semantics (see
 * docs/prompts.md). Every template — system prompts, catalog values, prompt files — goes
 * through an instance of this class. Templates are compiled once per (name, file, source) and
 * cached; rendering is synchronous and does no I/O (the loader links includes beforehand).
 */
export class TemplateEnvironment {
  private readonly cache = new Map<string, CompiledTemplate>();
  /** What each render may spend; see `RenderLimits` and docs/prompts.md. */
  readonly limits: RenderLimits;

  constructor(options?: { limits?: Partial<RenderLimits> }) {
    this.limits = Object.freeze({ ...DEFAULT_RENDER_LIMITS, ...options?.limits });
  }

  /** How many distinct templates this environment compiled (cache misses). */
  get compiledCount(): number {
    return this.cache.size;
  }

  /**
   * Compiles `source` (or returns the cached result). Throws `TemplateSyntaxError` naming
   * `name`, `file`, line and column for syntax errors and refused constructs.
   */
  compile(name: string, source: string, file?: string): CompiledTemplate {
    const key = `${name}\u0000${file ?? ""}\u0000${source}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const compiled = sharedCompiled.get(key) ?? compileTemplate(name, source, file);
    rememberCompiled(key, compiled);
    this.cache.set(key, compiled);
    return compiled;
  }

  /**
   * Renders a linked template against `data` (plain data; deep-copied and frozen first).
   * Throws `TemplateRenderError` naming the template, line and column of the failure.
   */
  render(
    template: LinkedTemplate,
    data: Readonly<Record<string, unknown>>,
    options?: RenderOptions,
  ): RenderResult {
    const frozen = freezeTemplateData(data);
    const watched = options?.watch ? frozen[options.watch.variable] : undefined;
    const state = isPlainObject(watched)
      ? new RenderState(this.limits, watched, options?.watch?.attribute ?? null)
      : new RenderState(this.limits, null, null);
    const dataScope = new Scope(null, template, state, TEMPLATE_GLOBALS);
    for (const key of Object.keys(frozen)) dataScope.set(key, frozen[key]);
    const root = dataScope.child();
    let text: string;
    try {
      text = template.compiled.run(root);
      state.budget.output(text.length);
    } catch (error) {
      if (TemplateRenderError.isInstance(error)) throw error;
      throw asRenderErrorAt(error, root, 1, 1);
    }
    return { text, watchedRead: state.watchHit };
  }
}

/**
 * Compiled templates shared by every environment: a compiled template is frozen and holds no
 * per-environment state (limits and data come with each render), so a pod restored or created
 * again does not re-parse the same builtin pack. Bounded, least recently used first out.
 */
const sharedCompiled = new Map<string, CompiledTemplate>();
const SHARED_COMPILED_MAX = 512;

function rememberCompiled(key: string, compiled: CompiledTemplate): void {
  sharedCompiled.delete(key);
  sharedCompiled.set(key, compiled);
  if (sharedCompiled.size > SHARED_COMPILED_MAX) {
    const oldest = sharedCompiled.keys().next().value;
    if (oldest !== undefined) sharedCompiled.delete(oldest);
  }
}

/** A compiled template with no includes, ready to render without a loader. */
export function linkStandalone(compiled: CompiledTemplate, file?: string): LinkedTemplate {
  const first = compiled.references[0];
  if (first) {
    throw new TemplateSyntaxError(
      `'${first.ref}' cannot be resolved here: load this template through a PromptLoader`,
      {
        template: compiled.name,
        file,
        line: first.line,
        column: first.column,
      },
    );
  }
  return Object.freeze({ name: compiled.name, file, compiled, deps: new Map() });
}

function compileTemplate(name: string, source: string, file: string | undefined): CompiledTemplate {
  if (source.length > MAX_TEMPLATE_SOURCE) {
    throw new TemplateSyntaxError(
      `the template source has ${source.length} characters; templates may hold at most ${MAX_TEMPLATE_SOURCE}`,
      { template: name, file, line: 1, column: 1 },
      { hint: "Prompt templates are a few kilobytes; keep large texts in data, not in the template." },
    );
  }
  const normalized = normalizeTemplateSource(source);
  let ast: ReturnType<typeof parseTemplateSource>;
  try {
    ast = parseTemplateSource(normalized);
  } catch (error) {
    if (!(error instanceof ParseFailure)) throw error;
    throw new TemplateSyntaxError(error.message, {
      template: name,
      file,
      line: error.line,
      column: error.column,
    });
  }
  const cx = new CompilerContext(name, file);
  const run = compileBlock(ast, cx);
  return Object.freeze({ name, source, references: Object.freeze(cx.references), weight: cx.nodes, run });
}
