import type { CommandContext, CommandInput } from "../commands/command.js";
import { turnCommand } from "../session/turn-command.js";

/** `podkit resume <session> [prompt]` */
export function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  const [sessionId, prompt] = input.positionals as [string, string | undefined];
  return turnCommand(input, ctx, prompt === undefined ? { sessionId } : { sessionId, prompt });
}
