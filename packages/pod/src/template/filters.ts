import { bindArguments } from "./arguments.js";
import { TemplateValueError } from "./errors.js";
import type { FilterDefinition } from "./filter-support.js";
import { collectionFilters } from "./filters-collections.js";
import { TEXT_FILTERS } from "./filters-text.js";
import type { CallArguments } from "./values.js";

const table = new Map<string, FilterDefinition>();

/** Runs a filter on `value` with the arguments written after it. */
export function applyFilter(
  definition: FilterDefinition,
  name: string,
  value: unknown,
  rest: CallArguments,
): unknown {
  if (definition.kind === "variadic") return definition.impl(value, rest);
  const bound = bindArguments(`filter '${name}'`, definition.specs, {
    positional: [value, ...rest.positional],
    keywords: rest.keywords,
  });
  return definition.impl(bound);
}

function applyByName(name: string, value: unknown, rest: CallArguments): unknown {
  const definition = table.get(name);
  if (!definition) throw new TemplateValueError(`unknown filter '${name}'`);
  return applyFilter(definition, name, value, rest);
}

for (const [name, definition] of [...TEXT_FILTERS, ...collectionFilters(applyByName)])
  table.set(name, definition);

/** Every filter a template may use; nothing else is callable through `|`. */
export const TEMPLATE_FILTERS: ReadonlyMap<string, FilterDefinition> = table;
