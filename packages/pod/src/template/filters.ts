import { bindArguments } from "./arguments.js";
import type { RenderBudget } from "./budget.js";
import { TemplateValueError } from "./errors.js";
import type { FilterDefinition } from "./filter-support.js";
import { collectionFilters } from "./filters-collections.js";
import { TEXT_FILTERS } from "./filters-text.js";
import type { CallArguments } from "./values.js";

const table = new Map<string, FilterDefinition>();

/**
 * Runs a filter on `value` with the arguments written after it: charges reading the value to
 * `budget` first and checks the size of what the filter produced after.
 */
export function applyFilter(
  definition: FilterDefinition,
  name: string,
  value: unknown,
  rest: CallArguments,
  budget: RenderBudget,
): unknown {
  budget.read(value);
  for (const arg of rest.positional) budget.read(arg);
  if (rest.keywords !== null) for (const arg of rest.keywords.values()) budget.read(arg);
  let result: unknown;
  if (definition.kind === "variadic") result = definition.impl(value, rest, budget);
  else {
    const bound = bindArguments(`filter '${name}'`, definition.specs, {
      positional: [value, ...rest.positional],
      keywords: rest.keywords,
    });
    result = definition.impl(bound, budget);
  }
  return budget.result(result, `filter '${name}'`);
}

function applyByName(name: string, value: unknown, rest: CallArguments, budget: RenderBudget): unknown {
  const definition = table.get(name);
  if (!definition) throw new TemplateValueError(`unknown filter '${name}'`);
  return applyFilter(definition, name, value, rest, budget);
}

for (const [name, definition] of [...TEXT_FILTERS, ...collectionFilters(applyByName)])
  table.set(name, definition);

/** Every filter a template may use; nothing else is callable through `|`. */
export const TEMPLATE_FILTERS: ReadonlyMap<string, FilterDefinition> = table;
