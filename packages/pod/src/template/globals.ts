import { bindArguments, type ParamSpec, params } from "./arguments.js";
import type { RenderBudget } from "./budget.js";
import { TemplateValueError } from "./errors.js";
import { type CallArguments, TemplateCallable, TemplateObject, typeName } from "./values.js";

/** A builtin function: a fixed signature and a pure implementation over bound arguments. */
export class BuiltinFunction extends TemplateCallable {
  constructor(
    name: string,
    private readonly specs: readonly ParamSpec[],
    private readonly impl: (bound: unknown[], budget: RenderBudget) => unknown,
  ) {
    super(`function '${name}'`);
    Object.freeze(this);
  }

  invoke(args: CallArguments, budget: RenderBudget): unknown {
    budget.step(1);
    return this.impl(bindArguments(this.displayName, this.specs, args), budget);
  }
}

// Variadic builtins (cycler, dict) take their arguments as written.
class VariadicFunction extends TemplateCallable {
  constructor(
    name: string,
    private readonly impl: (args: CallArguments) => unknown,
  ) {
    super(`function '${name}'`);
    Object.freeze(this);
  }

  invoke(args: CallArguments, budget: RenderBudget): unknown {
    budget.step(1 + args.positional.length);
    return this.impl(args);
  }
}

function integer(what: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new TemplateValueError(`${what} must be an integer, got a ${typeName(value)}`);
  }
  return value;
}

const range = new BuiltinFunction(
  "range",
  params("start", ["stop", null], ["step", 1]),
  ([a, b, c], budget) => {
    const [start, stop] =
      b === null
        ? [0, integer("range() stop", a)]
        : [integer("range() start", a), integer("range() stop", b)];
    const step = integer("range() step", c);
    if (step === 0) throw new TemplateValueError("range() step must not be zero");
    const count = Math.max(0, Math.ceil((stop - start) / step));
    budget.reserve(count, "range()");
    budget.step(count);
    return Object.freeze(Array.from({ length: count }, (_, i) => start + i * step));
  },
);

/** `cycler(a, b, …)`: `next()` returns the items in turn, `current` the last one returned. */
class Cycler extends TemplateObject {
  private index = -1;
  private readonly next = new BuiltinFunction("next", [], () => {
    this.index = (this.index + 1) % this.items.length;
    return this.items[this.index];
  });
  private readonly reset = new BuiltinFunction("reset", [], () => {
    this.index = -1;
    return null;
  });

  constructor(private readonly items: readonly unknown[]) {
    super();
  }

  getAttribute(name: string): unknown {
    if (name === "next") return this.next;
    if (name === "reset") return this.reset;
    if (name === "current") return this.index < 0 ? null : this.items[this.index];
    return undefined;
  }
}

const cycler = new VariadicFunction("cycler", (args) => {
  if (args.keywords) throw new TemplateValueError("cycler() takes no keyword arguments");
  if (args.positional.length === 0) throw new TemplateValueError("cycler() needs at least one item");
  return new Cycler(Object.freeze([...args.positional]));
});

const joiner = new BuiltinFunction("joiner", params(["sep", ","]), ([sep]) => {
  if (typeof sep !== "string") throw new TemplateValueError("joiner() separator must be a string");
  let first = true;
  return new BuiltinFunction("joiner", [], () => {
    const out = first ? "" : sep;
    first = false;
    return out;
  });
});

const dict = new VariadicFunction("dict", (args) => {
  if (args.positional.length > 0) throw new TemplateValueError("dict() takes keyword arguments only");
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of args.keywords ?? []) out[k] = v;
  return Object.freeze(out);
});

/** Names every template can see after its own variables and its data. */
export const TEMPLATE_GLOBALS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ["range", range],
  ["cycler", cycler],
  ["joiner", joiner],
  ["dict", dict],
  // Python spellings of the literals, for templates written against Jinja2 documentation.
  ["True", true],
  ["False", false],
  ["None", null],
]);
