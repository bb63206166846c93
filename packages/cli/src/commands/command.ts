import type { PodkitEnv } from "@podkit/manifest";
import type { CliIo } from "../io.js";

/** One option of a command, in the shape `node:util` `parseArgs` takes, plus its help text. */
export interface OptionSpec {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** Placeholder shown in help for a string option (`--set <key=value>`). */
  valueName?: string;
  help: string;
}

/** Parsed command line of one command: option values by long name, then positionals. */
export interface CommandInput {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** What a running command may use; never `process` directly, so tests can inject everything. */
export interface CommandContext {
  io: CliIo;
  env: PodkitEnv;
  debug: boolean;
}

/**
 * A `podkit` subcommand. Add one by writing `src/commands/<name>.ts` that exports a
 * `CommandSpec` and adding ONE line to the `commands` list in `src/commands/index.ts`.
 * `--help`, `-h` and `--debug` are handled for every command; do not declare them.
 */
export interface CommandSpec {
  /** Words that select the command: `["manifest", "show"]` is `podkit manifest show`. */
  path: readonly string[];
  /** One line for `podkit --help`. */
  summary: string;
  /** Synopsis after `podkit `, e.g. `manifest show [file] [--set key=value]... [--json]`. */
  usage: string;
  /** Further paragraphs for `podkit <command> --help`. */
  details?: string;
  options?: Record<string, OptionSpec>;
  /** Bounds on positional arguments (default: none allowed). */
  positionals?: { min?: number; max?: number; names?: string };
  /** Runs the command; resolves to the exit code. Throw podkit errors for user mistakes. */
  run(input: CommandInput, ctx: CommandContext): Promise<number>;
}

/** The module a command's `run` lives in: loaded only when that command runs (start-up stays fast). */
export type CommandModule = { run(input: CommandInput, ctx: CommandContext): Promise<number> };

/**
 * A `run` that imports its implementation on first use, so `podkit --version` and `--help` never
 * load the manifest, the pod or a provider package.
 */
export function lazyRun(load: () => Promise<CommandModule>): CommandSpec["run"] {
  return async (input, ctx) => (await load()).run(input, ctx);
}

/** The string value of an option, or undefined. */
export function stringOption(value: CommandInput["values"][string]): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The string values of a repeatable string option. */
export function stringList(value: CommandInput["values"][string]): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
}
