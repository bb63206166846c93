import { bindArguments } from "./arguments.js";
import { CALL_STEPS } from "./budget.js";
import { compileExpr, compileLenient } from "./compile-expressions.js";
import { compileBlock } from "./compile-statements.js";
import {
  asRenderErrorAt,
  type Block,
  type CompilerContext,
  checkName,
  child,
  children,
  type Expr,
  expressionAsWritten,
  position,
} from "./compile-support.js";
import { TemplateValueError } from "./errors.js";
import { applyFilter, TEMPLATE_FILTERS } from "./filters.js";
import type { AstNode } from "./nunjucks-parser.js";
import type { Scope } from "./scope.js";
import { TEMPLATE_TESTS } from "./tests.js";
import { type CallArguments, TemplateCallable, typeName } from "./values.js";

type ArgsExpr = (scope: Scope) => CallArguments;

const NO_ARGS: CallArguments = Object.freeze({ positional: Object.freeze([]), keywords: null });

/** Compiles `(a, b, name=c)`; keyword names must be identifiers. */
export function compileArgs(nodes: readonly AstNode[], cx: CompilerContext): ArgsExpr {
  const last = nodes.at(-1);
  const hasKeywords = last?.typename === "KeywordArgs";
  const positional = (hasKeywords ? nodes.slice(0, -1) : nodes).map((n) => compileExpr(n, cx));
  const keywords = hasKeywords
    ? children(last as AstNode).map((pair): [string, Expr] => [
        checkName(cx, child(pair, "key"), "keyword argument"),
        compileExpr(child(pair, "value"), cx),
      ])
    : [];
  if (positional.length === 0 && keywords.length === 0) return () => NO_ARGS;
  return (s) => ({
    positional: positional.map((p) => p(s)),
    keywords: keywords.length === 0 ? null : new Map(keywords.map(([k, v]) => [k, v(s)])),
  });
}

/** `f(…)`: only `TemplateCallable`s (macros, callers, builtin globals) can be called. */
export function compileCall(node: AstNode, cx: CompilerContext): Expr {
  const calleeNode = child(node, "name");
  const callee = compileExpr(calleeNode, cx);
  const args = compileArgs(children(child(node, "args")), cx);
  const [line, column] = position(node);
  const shown = expressionAsWritten(calleeNode);
  return (s) => {
    const fn = callee(s);
    if (!(fn instanceof TemplateCallable)) {
      throw s.error(`'${shown}' is not callable (it is a ${typeName(fn)})`, line, column);
    }
    const a = args(s);
    try {
      return fn.invoke(a, s.state.budget);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
  };
}

/** `value | name(args)`: the filter must exist at compile time; `default`'s value is lenient. */
export function compileFilter(node: AstNode, cx: CompilerContext): Expr {
  const nameNode = child(node, "name");
  const name = checkName(cx, nameNode, "filter");
  const definition = TEMPLATE_FILTERS.get(name);
  if (!definition) cx.fail(nameNode, `unknown filter '${name}'`);
  const [valueNode, ...restNodes] = children(child(node, "args"));
  if (!valueNode) cx.fail(node, `filter '${name}' has nothing to filter`);
  const written = expressionAsWritten(valueNode);
  const value =
    name === "default" || name === "d" ? compileLenient(valueNode, cx, true) : compileExpr(valueNode, cx);
  const rest = compileArgs(restNodes, cx);
  const [line, column] = position(nameNode);
  return (s) => {
    const v = value(s);
    const r = rest(s);
    const state = s.state;
    if (state.watchObject !== null) {
      state.noteWholeRead(v);
      for (const arg of r.positional) state.noteWholeRead(arg);
    }
    try {
      return applyFilter(definition, name, v, r, state.budget);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column, [[v, written]]);
    }
  };
}

/** `value is name` / `value is name(args)`; `defined`/`undefined` see their operand leniently. */
export function compileIs(node: AstNode, cx: CompilerContext): Expr {
  const right = child(node, "right");
  const testNode = right.typename === "FunCall" ? child(right, "name") : right;
  const name = checkName(cx, testNode, "test");
  const definition = TEMPLATE_TESTS.get(name);
  if (!definition) cx.fail(testNode, `unknown test '${name}'`);
  const lenient = name === "defined" || name === "undefined";
  const leftNode = child(node, "left");
  const value = lenient ? compileLenient(leftNode, cx, false) : compileExpr(leftNode, cx);
  const args = right.typename === "FunCall" ? compileArgs(children(child(right, "args")), cx) : () => NO_ARGS;
  const [line, column] = position(testNode);
  return (s) => {
    const v = value(s);
    const a = args(s);
    try {
      const budget = s.state.budget;
      budget.read(v);
      const bound = bindArguments(`test '${name}'`, definition.specs, {
        positional: [v, ...a.positional],
        keywords: a.keywords,
      });
      return definition.impl(bound, budget);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
  };
}

interface MacroParam {
  readonly name: string;
  readonly fallback: Expr | null;
}

interface MacroSpec {
  readonly name: string;
  readonly params: readonly MacroParam[];
  readonly body: Block;
  /** Steps one call costs: `CALL_STEPS` plus the nodes of the body. */
  readonly cost: number;
}

/** A macro or `caller` block bound to the scope it was defined in. */
class Macro extends TemplateCallable {
  constructor(
    private readonly spec: MacroSpec,
    private readonly definitionScope: Scope,
  ) {
    super(`macro '${spec.name}'`);
    Object.freeze(this);
  }

  invoke({ positional, keywords }: CallArguments): string {
    const { params, body } = this.spec;
    if (positional.length > params.length) {
      throw new TemplateValueError(
        `${this.displayName} takes ${params.length} argument(s), got ${positional.length}`,
      );
    }
    for (const name of keywords?.keys() ?? []) {
      if (name !== "caller" && !params.some((p) => p.name === name)) {
        throw new TemplateValueError(`${this.displayName} has no parameter '${name}'`);
      }
    }
    const scope = this.definitionScope.child();
    const budget = scope.state.budget;
    budget.step(this.spec.cost);
    budget.enter("macro calls");
    try {
      for (let i = 0; i < params.length; i++) {
        const param = params[i] as MacroParam;
        if (i < positional.length) scope.set(param.name, positional[i]);
        else if (keywords?.has(param.name)) scope.set(param.name, keywords.get(param.name));
        else scope.set(param.name, param.fallback ? param.fallback(scope) : undefined);
      }
      if (keywords?.has("caller")) scope.set("caller", keywords.get("caller"));
      return body(scope);
    } finally {
      budget.leave();
    }
  }
}

function compileMacroSpec(node: AstNode, name: string, cx: CompilerContext): MacroSpec {
  const params: MacroParam[] = [];
  for (const arg of children(child(node, "args"))) {
    if (arg.typename === "KeywordArgs") {
      for (const pair of children(arg)) {
        params.push({
          name: checkName(cx, child(pair, "key"), "parameter"),
          fallback: compileExpr(child(pair, "value"), cx),
        });
      }
    } else {
      params.push({ name: checkName(cx, arg, "parameter"), fallback: null });
    }
  }
  const seen = new Set<string>();
  for (const p of params) {
    if (seen.has(p.name)) cx.fail(node, `parameter '${p.name}' is declared twice in macro '${name}'`);
    seen.add(p.name);
  }
  const before = cx.nodes;
  const body = compileBlock(child(node, "body"), cx);
  return { name, params, body, cost: CALL_STEPS + cx.nodes - before };
}

/** `{% macro name(…) %}`: binds the macro in the current scope when the statement runs. */
export function compileMacroDefinition(node: AstNode, cx: CompilerContext): Block {
  const name = checkName(cx, child(node, "name"), "macro");
  const spec = compileMacroSpec(node, name, cx);
  return (s) => {
    s.set(name, new Macro(spec, s));
    return "";
  };
}

/** The body of a `{% call %}` block, passed to the macro as `caller`. */
export function compileCallerBlock(node: AstNode, cx: CompilerContext): Expr {
  const spec = compileMacroSpec(node, "caller", cx);
  return (s) => new Macro(spec, s);
}
