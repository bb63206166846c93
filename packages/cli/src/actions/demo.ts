import { type CommandContext, type CommandInput, stringOption } from "../commands/command.js";
import { runDemo } from "../demo/run-demo.js";

/** `podkit demo [--dir <path>]` */
export function run(input: CommandInput, ctx: CommandContext): Promise<number> {
  return runDemo(ctx, stringOption(input.values.dir));
}
