import type { RenderBudget } from "./budget.js";
import { compileCall, compileCallerBlock, compileFilter, compileIs } from "./compile-calls.js";
import { compileBlock } from "./compile-statements.js";
import {
  asRenderErrorAt,
  type CompilerContext,
  checkName,
  child,
  children,
  type Expr,
  expressionAsWritten,
  position,
} from "./compile-support.js";
import { UnprintableValue } from "./errors.js";
import type { AstNode } from "./nunjucks-parser.js";
import {
  arithmetic,
  compareOrdered,
  containsValue,
  getAttribute,
  isTruthy,
  RESERVED_ATTRIBUTES,
  toNumberOperand,
  toText,
  valuesEqual,
} from "./values.js";

const ARITHMETIC: Readonly<Record<string, string>> = {
  Add: "+",
  Sub: "-",
  Mul: "*",
  Div: "/",
  FloorDiv: "//",
  Mod: "%",
  Pow: "**",
};

/** Compiles an expression with strict undefined semantics: every missing name is an error. */
export function compileExpr(node: AstNode, cx: CompilerContext): Expr {
  cx.nodes++;
  switch (node.typename) {
    case "Literal":
      return compileLiteral(node, cx);
    case "Symbol":
      return compileName(node, cx);
    case "LookupVal":
      return compileLookup(node, cx);
    case "Group":
      return compileGroup(node, cx);
    case "Array":
      return compileList(node, cx);
    case "Dict":
      return compileDict(node, cx);
    case "FunCall":
      return compileCall(node, cx);
    case "Filter":
      return compileFilter(node, cx);
    case "Is":
      return compileIs(node, cx);
    case "Caller":
      return compileCallerBlock(node, cx);
    case "Capture": {
      const body = compileBlock(child(node, "body"), cx);
      return (s) => body(s);
    }
    case "InlineIf":
      return compileInlineIf(node, cx);
    case "And":
    case "Or":
      return compileLogical(node, cx);
    case "Not": {
      const target = compileExpr(child(node, "target"), cx);
      return (s) => !isTruthy(target(s));
    }
    case "In":
      return compileIn(node, cx);
    case "Compare":
      return compileCompare(node, cx);
    case "Concat":
      return compileConcat(node, cx);
    case "Neg":
    case "Pos":
      return compileUnary(node, cx);
    default:
      if (node.typename in ARITHMETIC) return compileArithmetic(node, cx);
      return cx.fail(node, `unsupported expression (${node.typename})`);
  }
}

/**
 * Compiles the operand of `is defined` / `is undefined` / `| default(…)`: a missing name or a
 * missing last attribute yields `undefined` instead of an error. Only that last step is
 * lenient (`ghost.deeper is defined` still fails on `ghost`, as in minijinja's Strict mode).
 * `countsAsRead` says whether reading the value counts as using it (default: yes; is defined: no).
 */
export function compileLenient(node: AstNode, cx: CompilerContext, countsAsRead: boolean): Expr {
  if (node.typename === "Symbol") {
    const name = checkName(cx, node, "variable");
    return (s) => s.lookup(name);
  }
  if (node.typename === "LookupVal") {
    const target = compileExpr(child(node, "target"), cx);
    const key = compileKey(child(node, "val"), cx);
    return (s) => {
      const object = target(s);
      const k = key(s);
      let value: unknown;
      try {
        value = getAttribute(object, k);
      } catch {
        return undefined;
      }
      if (countsAsRead && value !== undefined) s.state.noteAttributeRead(object, k);
      return value;
    };
  }
  return compileExpr(node, cx);
}

function compileLiteral(node: AstNode, cx: CompilerContext): Expr {
  const value = node.value;
  if (value instanceof RegExp) cx.fail(node, "regular expression literals are not supported");
  return () => value;
}

function compileName(node: AstNode, cx: CompilerContext): Expr {
  const name = checkName(cx, node, "variable");
  const [line, column] = position(node);
  return (s) => {
    const value = s.lookup(name);
    if (value === undefined) throw s.error(`'${name}' is undefined`, line, column, { variable: name });
    return value;
  };
}

function compileKey(node: AstNode, cx: CompilerContext): Expr {
  if (node.typename === "Literal") {
    const key = node.value;
    if (typeof key === "string" && RESERVED_ATTRIBUTES.has(key)) {
      cx.fail(node, `attribute '${key}' is not accessible in templates`);
    }
    return () => key;
  }
  return compileExpr(node, cx);
}

function compileLookup(node: AstNode, cx: CompilerContext): Expr {
  const targetNode = child(node, "target");
  const target = compileExpr(targetNode, cx);
  const key = compileKey(child(node, "val"), cx);
  const [line, column] = position(node);
  const shown = expressionAsWritten(node);
  const shownTarget = expressionAsWritten(targetNode);
  return (s) => {
    const object = target(s);
    const k = key(s);
    let value: unknown;
    try {
      value = getAttribute(object, k);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
    if (value === undefined) {
      const why = object === null ? ` ('${shownTarget}' is none)` : "";
      throw s.error(`'${shown}' is undefined${why}`, line, column, { variable: shown });
    }
    s.state.noteAttributeRead(object, k);
    return value;
  };
}

function compileGroup(node: AstNode, cx: CompilerContext): Expr {
  const items = children(node);
  if (items.length === 1) return compileExpr(items[0] as AstNode, cx);
  return compileList(node, cx); // `(a, b)` is a tuple, as in Jinja
}

function compileList(node: AstNode, cx: CompilerContext): Expr {
  const items = children(node).map((n) => compileExpr(n, cx));
  return (s) => Object.freeze(items.map((item) => item(s)));
}

function compileDict(node: AstNode, cx: CompilerContext): Expr {
  const pairs = children(node).map((pair): [string, Expr] => {
    const keyNode = child(pair, "key");
    // nunjucks semantics: `{a: 1}` means the key "a" (a name is not evaluated).
    const key = keyNode.typename === "Symbol" ? checkName(cx, keyNode, "key") : keyNode.value;
    if (typeof key !== "string") cx.fail(keyNode, "mapping keys must be strings or names");
    if (RESERVED_ATTRIBUTES.has(key)) cx.fail(keyNode, `'${key}' cannot be used as a mapping key`);
    return [key, compileExpr(child(pair, "value"), cx)];
  });
  return (s) => {
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, value] of pairs) out[key] = value(s);
    return Object.freeze(out);
  };
}

function compileInlineIf(node: AstNode, cx: CompilerContext): Expr {
  const cond = compileExpr(child(node, "cond"), cx);
  const body = compileExpr(child(node, "body"), cx);
  const elseNode = child(node, "else_");
  const otherwise = elseNode ? compileExpr(elseNode, cx) : () => "";
  return (s) => (isTruthy(cond(s)) ? body(s) : otherwise(s));
}

function compileLogical(node: AstNode, cx: CompilerContext): Expr {
  const left = compileExpr(child(node, "left"), cx);
  const right = compileExpr(child(node, "right"), cx);
  if (node.typename === "And") {
    return (s) => {
      const value = left(s);
      return isTruthy(value) ? right(s) : value;
    };
  }
  return (s) => {
    const value = left(s);
    return isTruthy(value) ? value : right(s);
  };
}

function compileIn(node: AstNode, cx: CompilerContext): Expr {
  const needle = compileExpr(child(node, "left"), cx);
  const haystack = compileExpr(child(node, "right"), cx);
  const [line, column] = position(node);
  return (s) => {
    try {
      return containsValue(haystack(s), needle(s), s.state.budget);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
  };
}

function compileCompare(node: AstNode, cx: CompilerContext): Expr {
  const first = compileExpr(child(node, "expr"), cx);
  const ops = (node.ops as AstNode[]).map((op) => ({
    type: String(op.type),
    operand: compileExpr(child(op, "expr"), cx),
  }));
  const [line, column] = position(node);
  return (s) => {
    let left = first(s);
    for (const { type, operand } of ops) {
      const right = operand(s);
      let holds: boolean;
      if (type === "==" || type === "===") holds = valuesEqual(left, right, s.state.budget);
      else if (type === "!=" || type === "!==") holds = !valuesEqual(left, right, s.state.budget);
      else {
        try {
          holds = compareOrdered(type, left, right, s.state.budget);
        } catch (error) {
          throw asRenderErrorAt(error, s, line, column);
        }
      }
      if (!holds) return false;
      left = right;
    }
    return true;
  };
}

/** `left <op> right` where the operation may throw a value error (located at the operator). */
function compileBinary(
  node: AstNode,
  cx: CompilerContext,
  apply: (a: unknown, b: unknown, budget: RenderBudget) => unknown,
): Expr {
  const leftNode = child(node, "left");
  const rightNode = child(node, "right");
  const left = compileExpr(leftNode, cx);
  const right = compileExpr(rightNode, cx);
  const [line, column] = position(node);
  const writtenLeft = expressionAsWritten(leftNode);
  const writtenRight = expressionAsWritten(rightNode);
  return (s) => {
    const a = left(s);
    const b = right(s);
    try {
      return apply(a, b, s.state.budget);
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column, [
        [a, writtenLeft],
        [b, writtenRight],
      ]);
    }
  };
}

function compileArithmetic(node: AstNode, cx: CompilerContext): Expr {
  const op = ARITHMETIC[node.typename] as string;
  return compileBinary(node, cx, (a, b, budget) => arithmetic(op, a, b, budget));
}

function compileConcat(node: AstNode, cx: CompilerContext): Expr {
  return compileBinary(node, cx, (a, b, budget) => {
    let left: string;
    let right: string;
    try {
      left = toText(a);
      right = toText(b);
    } catch (error) {
      throw error instanceof UnprintableValue ? error.within("~") : error;
    }
    budget.reserve(left.length + right.length, "~");
    return left + right;
  });
}

function compileUnary(node: AstNode, cx: CompilerContext): Expr {
  const op = node.typename === "Neg" ? "-" : "+";
  const target = compileExpr(child(node, "target"), cx);
  const [line, column] = position(node);
  return (s) => {
    let value: number;
    try {
      value = toNumberOperand(op, target(s));
    } catch (error) {
      throw asRenderErrorAt(error, s, line, column);
    }
    return op === "-" ? -value : value;
  };
}
