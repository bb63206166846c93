import { CALL_STEPS } from "./budget.js";
import {
  asRenderErrorAt,
  type Block,
  type CompilerContext,
  checkName,
  child,
  children,
  position,
} from "./compile-support.js";
import type { AstNode } from "./nunjucks-parser.js";
import { type LinkedTemplate, Scope, type TemplateReference } from "./scope.js";

/**
 * Includes and imports name their target with a string literal, so every template a render can
 * reach is known before it starts: the loader resolves, reads and compiles the whole graph up
 * front, and rendering itself never does I/O (nor fails half-way on a missing file).
 */
function recordReference(node: AstNode, kind: TemplateReference["kind"], cx: CompilerContext): string {
  const target = child(node, "template");
  if (target.typename !== "Literal" || typeof target.value !== "string") {
    cx.fail(
      target,
      `${kind} needs a literal template name such as "$workspace/notes" (expressions are not allowed)`,
    );
  }
  const [line, column] = position(node);
  const ignoreMissing = kind === "include" && node.ignoreMissing === true;
  cx.references.push({ ref: target.value, kind, ignoreMissing, line, column });
  return target.value;
}

function linked(s: Scope, ref: string, line: number, column: number): LinkedTemplate | null {
  const target = s.template.deps.get(ref);
  if (target === undefined) {
    throw s.error(`'${ref}' was not loaded before rendering (render through a PromptLoader)`, line, column);
  }
  return target;
}

/** Runs `target` in `scope`, charging its size and counting the nesting depth. */
function runNested(s: Scope, target: LinkedTemplate, scope: Scope, line: number, column: number): string {
  const budget = s.state.budget;
  try {
    budget.step(CALL_STEPS + target.compiled.weight);
    budget.enter("includes and imports", " (a cycle?)");
  } catch (error) {
    throw asRenderErrorAt(error, s, line, column);
  }
  try {
    return target.compiled.run(scope);
  } finally {
    budget.leave();
  }
}

/** `{% include "ref" [ignore missing] %}`: renders the target with the current variables. */
export function compileInclude(node: AstNode, cx: CompilerContext): Block {
  const ref = recordReference(node, "include", cx);
  const [line, column] = position(node);
  return (s) => {
    const target = linked(s, ref, line, column);
    return target === null ? "" : runNested(s, target, s.child(target), line, column);
  };
}

/** Runs an imported template for its top-level names (macros and sets not starting with `_`). */
function exportsOf(s: Scope, target: LinkedTemplate, withContext: boolean, line: number, column: number) {
  const root = withContext ? s.child(target) : new Scope(null, target, s.state, s.globals);
  runNested(s, target, root, line, column);
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, value] of root.ownEntries()) if (!name.startsWith("_")) out[name] = value;
  return Object.freeze(out);
}

function importTarget(s: Scope, ref: string, line: number, column: number): LinkedTemplate {
  const target = linked(s, ref, line, column);
  if (target === null) throw s.error(`cannot import missing template '${ref}'`, line, column);
  return target;
}

/** `{% import "ref" as name [with context] %}` */
export function compileImport(node: AstNode, cx: CompilerContext): Block {
  const ref = recordReference(node, "import", cx);
  const name = checkName(cx, child(node, "target"), "import");
  const withContext = node.withContext === true;
  const [line, column] = position(node);
  return (s) => {
    s.set(name, exportsOf(s, importTarget(s, ref, line, column), withContext, line, column));
    return "";
  };
}

/** `{% from "ref" import a, b as c [with context] %}` */
export function compileFromImport(node: AstNode, cx: CompilerContext): Block {
  const ref = recordReference(node, "from", cx);
  const withContext = node.withContext === true;
  const [line, column] = position(node);
  const names = children(child(node, "names")).map((n): [string, string] =>
    n.typename === "Pair"
      ? [checkName(cx, child(n, "key"), "import"), checkName(cx, child(n, "value"), "import")]
      : [checkName(cx, n, "import"), checkName(cx, n, "import")],
  );
  return (s) => {
    const exported = exportsOf(s, importTarget(s, ref, line, column), withContext, line, column);
    for (const [name, alias] of names) {
      if (!Object.hasOwn(exported, name)) throw s.error(`'${ref}' does not export '${name}'`, line, column);
      s.set(alias, exported[name]);
    }
    return "";
  };
}
