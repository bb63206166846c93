import type { CommandContext, CommandInput } from "../commands/command.js";
import { turnCommand } from "../session/turn-command.js";

/** `podkit run [prompt]` */
export function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const prompt = input.positionals[0];
  return turnCommand(input, ctx, prompt === undefined ? {} : { prompt });
}
