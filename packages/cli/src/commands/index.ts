import type { CommandSpec } from "./command.js";
import { manifestShow } from "./manifest-show.js";
import { promptCatalog } from "./prompt-catalog.js";

export type { CommandContext, CommandInput, CommandSpec, OptionSpec } from "./command.js";

/**
 * Every `podkit` command. To add one: write `src/commands/<name>.ts` exporting a `CommandSpec`,
 * import it above, and add ONE line to this list (help lists commands in this order).
 */
// biome-ignore format: one command per line, so parallel additions never touch the same line.
export const commands: readonly CommandSpec[] = [
  manifestShow,
  promptCatalog,
];
