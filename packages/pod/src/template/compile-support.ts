import { LimitExceeded } from "./budget.js";
import { TemplateRenderError, TemplateSyntaxError, TemplateValueError, UnprintableValue } from "./errors.js";
import type { AstNode } from "./nunjucks-parser.js";
import type { Scope, TemplateReference } from "./scope.js";
import { unprintableError } from "./unprintable.js";
import { RESERVED_ATTRIBUTES } from "./values.js";

/** An expression compiled to a closure over the scope it runs in. */
export type Expr = (scope: Scope) => unknown;
/** A statement list compiled to a closure producing its output. */
export type Block = (scope: Scope) => string;

/** State of compiling one template: its name (for errors) and the references it makes. */
export class CompilerContext {
  readonly references: TemplateReference[] = [];
  /** Nodes compiled so far: the step cost of running what was compiled (see `RenderLimits`). */
  nodes = 0;

  constructor(
    readonly template: string,
    readonly file: string | undefined,
  ) {}

  /** A compile-time refusal located at `node`. */
  fail(node: AstNode, problem: string): never {
    throw new TemplateSyntaxError(problem, {
      template: this.template,
      file: this.file,
      line: node.lineno + 1,
      column: node.colno + 1,
    });
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks a name used as a variable, macro, parameter, filter or test. nunjucks' lexer accepts
 * almost anything up to a delimiter as a "symbol" (quotes, backslashes, `$`, `;`), which its own
 * code generator pastes into JavaScript; we accept identifiers only.
 */
export function checkName(cx: CompilerContext, node: AstNode, what: string): string {
  const name = node.value;
  if (node.typename !== "Symbol" || typeof name !== "string") cx.fail(node, `expected a ${what} name`);
  if (!IDENTIFIER.test(name)) cx.fail(node, `invalid ${what} name ${JSON.stringify(name)}`);
  if (RESERVED_ATTRIBUTES.has(name))
    cx.fail(node, `'${name}' is reserved and cannot be used as a ${what} name`);
  return name;
}

export function child(node: AstNode, field: string): AstNode {
  return node[field] as AstNode;
}

export function children(node: AstNode): readonly AstNode[] {
  return (node.children as AstNode[] | undefined) ?? [];
}

/** What `expressionAsWritten` says of an expression it does not spell out. */
const UNWRITTEN = "(expression)";

/** How an expression reads in an error message: `scope.ghost`, `tools[0]`, `m(…)`, `x | sort`. */
export function expressionAsWritten(node: AstNode): string {
  switch (node.typename) {
    case "Symbol":
      return String(node.value);
    case "Literal":
      return JSON.stringify(node.value) ?? String(node.value);
    case "LookupVal": {
      const targetNode = child(node, "target");
      const written = expressionAsWritten(targetNode);
      const target = targetNode.typename === "Filter" ? `(${written})` : written;
      const key = child(node, "val");
      if (key.typename === "Literal" && typeof key.value === "string" && IDENTIFIER.test(key.value)) {
        return `${target}.${key.value}`;
      }
      if (key.typename === "Literal") return `${target}[${JSON.stringify(key.value)}]`;
      return `${target}[${expressionAsWritten(key)}]`;
    }
    case "FunCall":
      return `${expressionAsWritten(child(node, "name"))}(…)`;
    case "Filter": {
      const [value, ...rest] = children(child(node, "args"));
      const filter = `${String(child(node, "name").value)}${rest.length > 0 ? "(…)" : ""}`;
      return value ? `${expressionAsWritten(value)} | ${filter}` : filter;
    }
    default:
      return UNWRITTEN;
  }
}

/** 1-based position of a node. */
export function position(node: AstNode): [line: number, column: number] {
  return [node.lineno + 1, node.colno + 1];
}

/** A value an operation consumed and the expression it came from, to name it in errors. */
export type Operand = readonly [value: unknown, written: string];

/**
 * Turns whatever a helper threw into a located `TemplateRenderError`. Render errors from
 * deeper templates pass through untouched (they already name their own template and line).
 * A refusal to print a value names the operand it came from, when it is one of `operands`.
 */
export function asRenderErrorAt(
  error: unknown,
  scope: Scope,
  line: number,
  column: number,
  operands: readonly Operand[] = [],
): TemplateRenderError {
  if (TemplateRenderError.isInstance(error)) return error;
  if (error instanceof LimitExceeded) return scope.limitError(error.message, error.limit, line, column);
  if (error instanceof UnprintableValue) {
    const written = operands.find(([value, shown]) => value === error.value && shown !== UNWRITTEN)?.[1];
    const at = { template: scope.template.name, file: scope.template.file, line, column };
    return unprintableError(error, at, written);
  }
  if (error instanceof TemplateValueError) return scope.error(error.message, line, column);
  if (error instanceof RangeError) {
    // V8 throws RangeError both for an exhausted call stack and for a string over its size limit;
    // the budget stops both long before, so this is a last line of defence.
    const [problem, limit] = /string length/i.test(error.message)
      ? ["the output grew beyond the largest possible string", "output" as const]
      : ["the template recursed too deeply (call stack exhausted)", "depth" as const];
    return scope.limitError(problem, limit, line, column, error);
  }
  const message = error instanceof Error ? error.message : String(error);
  return scope.error(`internal error while rendering: ${message}`, line, column, { cause: error });
}
