import { TemplateValueError } from "./errors.js";
import type { CallArguments } from "./values.js";

/** One parameter of a builtin filter, test or global: required, or with a default value. */
export type ParamSpec = { readonly name: string; readonly default?: unknown };

/** `"name"` is required; `["name", value]` has a default. */
export type ParamShorthand = string | readonly [string, unknown];

export function params(...specs: ParamShorthand[]): readonly ParamSpec[] {
  return specs.map((s) => (typeof s === "string" ? { name: s } : { name: s[0], default: s[1] }));
}

/**
 * Binds positional and keyword arguments to `specs` the way Python does: positionals fill in
 * order, keywords by name; too many positionals, unknown or duplicate keywords and missing
 * required parameters are errors naming `what`.
 */
export function bindArguments(what: string, specs: readonly ParamSpec[], args: CallArguments): unknown[] {
  const { positional, keywords } = args;
  if (positional.length > specs.length) {
    throw new TemplateValueError(
      `${what} takes at most ${specs.length} argument(s), got ${positional.length}`,
    );
  }
  const bound = new Array<unknown>(specs.length);
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i] as ParamSpec;
    if (i < positional.length) {
      if (keywords?.has(spec.name)) throw new TemplateValueError(`${what} got '${spec.name}' twice`);
      bound[i] = positional[i];
    } else if (keywords?.has(spec.name)) {
      bound[i] = keywords.get(spec.name);
    } else if ("default" in spec) {
      bound[i] = spec.default;
    } else {
      throw new TemplateValueError(`${what} is missing its '${spec.name}' argument`);
    }
  }
  if (keywords) {
    for (const name of keywords.keys()) {
      if (!specs.some((s) => s.name === name))
        throw new TemplateValueError(`${what} has no parameter '${name}'`);
    }
  }
  return bound;
}
