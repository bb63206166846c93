export type { ErrorKind } from "@podkit/llm-worker";
export type { CommandContext, CommandInput, CommandSpec, OptionSpec } from "./commands/index.js";
export { commands } from "./commands/index.js";
export { OutputSchemaFileError, PodkitCliError, ScorerModuleError, UsageError } from "./errors.js";
export type { CliIo, TextSink } from "./io.js";
export { main } from "./main.js";
