import { CALL_STEPS } from "./budget.js";
import { compileMacroDefinition } from "./compile-calls.js";
import { compileExpr } from "./compile-expressions.js";
import { compileFromImport, compileImport, compileInclude } from "./compile-includes.js";
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
import type { AstNode } from "./nunjucks-parser.js";
import type { Scope } from "./scope.js";
import { isPlainObject, isTruthy, toText, typeName, valuesEqual } from "./values.js";

type Part = string | Block;

const UNSUPPORTED: Readonly<Record<string, string>> = {
  Extends: "`{% extends %}` is not supported in prompt templates; use include, import or macros",
  Block: "`{% block %}` is not supported in prompt templates; use include, import or macros",
  Super: "`super()` is not supported in prompt templates",
  IfAsync: "`{% ifAsync %}` is not supported (prompt templates render synchronously)",
  AsyncEach: "`{% asyncEach %}` is not supported (prompt templates render synchronously)",
  AsyncAll: "`{% asyncAll %}` is not supported (prompt templates render synchronously)",
  CallExtension: "template extensions are not supported",
  CallExtensionAsync: "template extensions are not supported",
};

/** Compiles a statement list; adjacent literal text is merged at compile time. */
export function compileBlock(node: AstNode | null | undefined, cx: CompilerContext): Block {
  if (!node) return () => "";
  const parts: Part[] = [];
  const at: [number, number][] = []; // where each part starts, for output-limit errors
  const list = node.typename === "NodeList" || node.typename === "Root" ? children(node) : [node];
  for (const statement of list) {
    for (const part of compileStatement(statement, cx)) {
      const previous = parts.at(-1);
      if (typeof part === "string" && typeof previous === "string") parts[parts.length - 1] = previous + part;
      else if (part !== "") {
        parts.push(part);
        at.push(position(statement));
      }
    }
  }
  if (parts.length === 0) return () => "";
  if (parts.length === 1) {
    const only = parts[0] as Part;
    return typeof only === "string" ? () => only : only;
  }
  return (s) => {
    const max = s.state.budget.limits.maxOutput;
    let out = "";
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as Part;
      out += typeof part === "string" ? part : part(s);
      if (out.length > max) {
        const [line, column] = at[i] as [number, number];
        throw asRenderErrorAt(s.state.budget.outputExceeded(), s, line, column);
      }
    }
    return out;
  };
}

function compileStatement(node: AstNode, cx: CompilerContext): Part[] {
  cx.nodes++;
  switch (node.typename) {
    case "Output":
      return children(node).map((n) => compileOutput(n, cx));
    case "If":
      return [compileIf(node, cx)];
    case "For":
      return [compileFor(node, cx)];
    case "Set":
      return [compileSet(node, cx)];
    case "Macro":
      return [compileMacroDefinition(node, cx)];
    case "Include":
      return [compileInclude(node, cx)];
    case "Import":
      return [compileImport(node, cx)];
    case "FromImport":
      return [compileFromImport(node, cx)];
    case "Switch":
      return [compileSwitch(node, cx)];
    case "NodeList":
      return [compileBlock(node, cx)];
    default:
      return cx.fail(node, UNSUPPORTED[node.typename] ?? `unsupported statement (${node.typename})`);
  }
}

function compileOutput(node: AstNode, cx: CompilerContext): Part {
  if (node.typename === "TemplateData") return String(node.value ?? "");
  const expr = compileExpr(node, cx);
  const [line, column] = position(node);
  const written = expressionAsWritten(node);
  return (s) => {
    const value = expr(s);
    if (typeof value === "string") return value;
    try {
      return toText(value);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column, [[value, written]]);
    }
  };
}

function compileIf(node: AstNode, cx: CompilerContext): Block {
  const cond = compileExpr(child(node, "cond"), cx);
  const body = compileBlock(child(node, "body"), cx);
  const otherwise = compileBlock(child(node, "else_"), cx);
  return (s) => (isTruthy(cond(s)) ? body(s) : otherwise(s));
}

/** The items a `for` walks: list items, string characters, mapping keys (or key/value pairs). */
function loopItems(value: unknown, arity: number): readonly unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === "string") return Array.from(value);
  if (isPlainObject(value)) return arity === 2 ? Object.entries(value) : Object.keys(value);
  throw new TemplateValueError(`cannot iterate over a ${typeName(value)}`);
}

function compileFor(node: AstNode, cx: CompilerContext): Block {
  const target = child(node, "name");
  const names =
    target.typename === "Array"
      ? children(target).map((n) => checkName(cx, n, "loop variable"))
      : [checkName(cx, target, "loop variable")];
  const iterable = compileExpr(child(node, "arr"), cx);
  const before = cx.nodes;
  const body = compileBlock(child(node, "body"), cx);
  const perIteration = CALL_STEPS + cx.nodes - before;
  const otherwise = compileBlock(child(node, "else_"), cx);
  const [line, column] = position(node);
  const single = names.length === 1 ? (names[0] as string) : null;
  return (s) => {
    const value = iterable(s);
    s.state.noteWholeRead(value);
    let list: readonly unknown[];
    try {
      list = loopItems(value, names.length);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
    const length = list.length;
    if (length === 0) return otherwise(s);
    const budget = s.state.budget;
    try {
      // The whole loop is paid for before it starts, so a runaway loop fails at once.
      budget.step(length * perIteration);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
    const max = budget.limits.maxOutput;
    let out = "";
    for (let i = 0; i < length; i++) {
      const iteration = s.child();
      const item = list[i];
      if (single !== null) iteration.set(single, item);
      else bindUnpacked(iteration, names, item, s, line, column);
      iteration.set(
        "loop",
        Object.freeze({
          index: i + 1,
          index0: i,
          revindex: length - i,
          revindex0: length - i - 1,
          first: i === 0,
          last: i === length - 1,
          length,
        }),
      );
      out += body(iteration);
      if (out.length > max) throw asRenderErrorAt(s.state.budget.outputExceeded(), s, line, column);
    }
    return out;
  };
}

function bindUnpacked(
  scope: Scope,
  names: readonly string[],
  item: unknown,
  at: Scope,
  line: number,
  column: number,
): void {
  if (!Array.isArray(item) || item.length !== names.length) {
    const got = Array.isArray(item) ? `${item.length} values` : `a ${typeName(item)}`;
    throw at.error(`cannot unpack ${got} into ${names.length} loop variables`, line, column);
  }
  names.forEach((name, i) => {
    scope.set(name, item[i]);
  });
}

function compileSet(node: AstNode, cx: CompilerContext): Block {
  const targets = (node.targets as AstNode[]).map((t) => {
    if (t.typename !== "Symbol")
      cx.fail(t, "only plain names can be set (`{% set a.b = … %}` is not allowed)");
    return checkName(cx, t, "variable");
  });
  const valueNode = child(node, "value");
  const value: Expr = valueNode ? compileExpr(valueNode, cx) : compileExpr(child(node, "body"), cx);
  return (s) => {
    const v = value(s);
    for (const name of targets) s.set(name, v);
    return "";
  };
}

function compileSwitch(node: AstNode, cx: CompilerContext): Block {
  const subject = compileExpr(child(node, "expr"), cx);
  const cases = (node.cases as AstNode[]).map((c) => ({
    cond: compileExpr(child(c, "cond"), cx),
    body: compileBlock(child(c, "body"), cx),
    empty: children(child(c, "body")).length === 0,
  }));
  const fallback = compileBlock(child(node, "default"), cx);
  return (s) => {
    const value = subject(s);
    let matched = false;
    for (const c of cases) {
      if (!matched && valuesEqual(value, c.cond(s), s.state.budget)) matched = true;
      if (matched && !c.empty) return c.body(s); // empty cases fall through, as in nunjucks
    }
    return fallback(s);
  };
}
