import { bindArguments, type ParamSpec, params } from "./arguments.js";
import type { RenderBudget } from "./budget.js";
import { TemplateValueError } from "./errors.js";
import {
  type CallArguments,
  compareOrdered,
  containsValue,
  isPlainObject,
  isTruthy,
  TemplateCallable,
  valuesEqual,
} from "./values.js";

/** A builtin test (`value is name(args…)`). */
export interface TestDefinition {
  readonly specs: readonly ParamSpec[];
  readonly impl: (bound: unknown[], budget: RenderBudget) => boolean;
}

function test(
  specs: readonly ParamSpec[],
  impl: (bound: unknown[], budget: RenderBudget) => boolean,
): TestDefinition {
  return Object.freeze({ specs, impl });
}

const unary = (impl: (value: unknown) => boolean) => test(params("value"), ([v]) => impl(v));
const binary = (other: string, impl: (value: unknown, other: unknown, budget: RenderBudget) => boolean) =>
  test(params("value", other), ([v, o], budget) => impl(v, o, budget));

const isString = (v: unknown): v is string => typeof v === "string";

const eq = binary("other", valuesEqual);
const ne = binary("other", (v, o, budget) => !valuesEqual(v, o, budget));
const lt = binary("other", (v, o, budget) => compareOrdered("<", v, o, budget));
const gt = binary("other", (v, o, budget) => compareOrdered(">", v, o, budget));

/** Every test a template may use; `defined`/`undefined` get their operand leniently. */
export const TEMPLATE_TESTS: ReadonlyMap<string, TestDefinition> = new Map([
  ["defined", unary((v) => v !== undefined)],
  ["undefined", unary((v) => v === undefined)],
  ["none", unary((v) => v === null)],
  ["boolean", unary((v) => typeof v === "boolean")],
  ["true", unary((v) => v === true)],
  ["false", unary((v) => v === false)],
  ["number", unary((v) => typeof v === "number")],
  ["integer", unary((v) => Number.isInteger(v))],
  ["float", unary((v) => typeof v === "number" && !Number.isInteger(v))],
  ["string", unary(isString)],
  ["mapping", unary(isPlainObject)],
  ["sequence", unary((v) => Array.isArray(v) || isString(v))],
  ["iterable", unary((v) => Array.isArray(v) || isString(v) || isPlainObject(v))],
  ["callable", unary((v) => v instanceof TemplateCallable)],
  ["odd", unary((v) => Number.isInteger(v) && Math.abs(v as number) % 2 === 1)],
  ["even", unary((v) => Number.isInteger(v) && (v as number) % 2 === 0)],
  [
    "divisibleby",
    binary("num", (v, n) => typeof v === "number" && typeof n === "number" && n !== 0 && v % n === 0),
  ],
  ["eq", eq],
  ["equalto", eq],
  ["ne", ne],
  ["lt", lt],
  ["lessthan", lt],
  ["gt", gt],
  ["greaterthan", gt],
  ["le", binary("other", (v, o, budget) => compareOrdered("<=", v, o, budget))],
  ["ge", binary("other", (v, o, budget) => compareOrdered(">=", v, o, budget))],
  ["in", binary("seq", (v, seq, budget) => containsValue(seq, v, budget))],
  ["sameas", binary("other", (v, o) => v === o)],
  ["lower", unary((v) => isString(v) && v === v.toLowerCase())],
  ["upper", unary((v) => isString(v) && v === v.toUpperCase())],
  ["truthy", unary(isTruthy)],
  ["falsy", unary((v) => !isTruthy(v))],
]);

/** Runs test `name` on `value` with extra arguments (used by `select`/`reject` filters too). */
export function runTest(name: string, value: unknown, extra: CallArguments, budget: RenderBudget): boolean {
  const definition = TEMPLATE_TESTS.get(name);
  if (!definition) throw new TemplateValueError(`unknown test '${name}'`);
  budget.read(value);
  for (const arg of extra.positional) budget.read(arg);
  const bound = bindArguments(`test '${name}'`, definition.specs, {
    positional: [value, ...extra.positional],
    keywords: extra.keywords,
  });
  return definition.impl(bound, budget);
}
