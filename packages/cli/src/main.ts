import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type CommandSpec, commands as registry } from "./commands/index.js";
import { UsageError } from "./errors.js";
import { commandHelp, globalHelp, groupHelp } from "./help.js";
import { type CliIo, podkitEnvOf } from "./io.js";
import { reportError } from "./report-error.js";

/**
 * Runs `podkit` with `argv` (the arguments after the program name) and resolves to the exit code.
 * Never throws and never touches `process`: output goes to `io`, paths resolve against `io.cwd`.
 */
export async function main(
  argv: readonly string[],
  io: CliIo,
  commands: readonly CommandSpec[] = registry,
): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    const { rest, workspace } = takeWorkspaceOption(argv.filter((arg) => arg !== "--debug"));
    return await dispatch(rest, io, commands, debug, workspace);
  } catch (error) {
    return reportError(error, io.stderr, debug);
  }
}

async function dispatch(
  argv: readonly string[],
  io: CliIo,
  commands: readonly CommandSpec[],
  debug: boolean,
  workspace: string | undefined,
): Promise<number> {
  const words = leadingWords(argv);
  const command = longestMatch(words, commands);
  if (!command) {
    if (words.length === 0) return topLevel(argv, io, commands);
    const group = longestGroup(words, commands);
    if (group.length > 0 && group.length === words.length) {
      const wantsHelp = argv.includes("--help") || argv.includes("-h");
      (wantsHelp ? io.stdout : io.stderr).write(`${groupHelp(group, commands)}\n`);
      return wantsHelp ? 0 : 2;
    }
    throw new UsageError(`unknown command "${words.slice(0, group.length + 1).join(" ")}"`, {
      hint: 'run "podkit --help" for the list of commands',
    });
  }
  const args = argv.slice(command.path.length);
  const parsed = parseCommandLine(command, args);
  if (parsed.values.help === true) {
    io.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  const { help: _help, ...values } = parsed.values;
  const env = podkitEnvOf(io);
  if (workspace !== undefined) env.workspace = workspace;
  return command.run({ values, positionals: parsed.positionals }, { io, env, debug });
}

/**
 * `--workspace <dir>` (or `--workspace=<dir>`), accepted before or after the command like
 * `--debug`: the workspace every command of this invocation works in, instead of the nearest
 * ancestor of the cwd holding `.podkit/`. Arguments after `--` are left alone.
 */
function takeWorkspaceOption(argv: readonly string[]): { rest: string[]; workspace: string | undefined } {
  const rest: string[] = [];
  let workspace: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    let value: string | undefined;
    if (arg === "--workspace") {
      value = argv[i + 1];
      if (value === undefined || value.startsWith("-")) {
        throw new UsageError("option --workspace needs a directory", {
          hint: "e.g. podkit --workspace ../project run",
        });
      }
      i++;
    } else if (arg.startsWith("--workspace=")) {
      value = arg.slice("--workspace=".length);
    } else {
      rest.push(arg);
      continue;
    }
    if (value === "")
      throw new UsageError("option --workspace needs a directory", { hint: "e.g. --workspace ../project" });
    if (workspace !== undefined && workspace !== value) {
      throw new UsageError("--workspace is given twice with different directories", {
        hint: "give it once",
      });
    }
    workspace = value;
  }
  return { rest, workspace };
}

/** `podkit`, `podkit --help`, `podkit --version`. */
function topLevel(argv: readonly string[], io: CliIo, commands: readonly CommandSpec[]): number {
  const first = argv[0];
  if (first === "--version" && argv.length === 1) {
    io.stdout.write(`${version()}\n`);
    return 0;
  }
  if (first === undefined || ((first === "--help" || first === "-h") && argv.length === 1)) {
    io.stdout.write(`${globalHelp(commands, version())}\n`);
    return 0;
  }
  throw new UsageError(`unknown option "${first}"`, { hint: 'run "podkit --help" for the list of commands' });
}

function parseCommandLine(command: CommandSpec, args: readonly string[]) {
  const hint = `run "podkit ${command.path.join(" ")} --help" for its usage`;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        ...Object.fromEntries(
          Object.entries(command.options ?? {}).map(([name, o]) => [
            name,
            {
              type: o.type,
              ...(o.multiple ? { multiple: true } : {}),
              ...(o.short ? { short: o.short } : {}),
            },
          ]),
        ),
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // node's messages go on to explain `--`; the first sentence is the useful part.
    const message = (error as Error).message.split(". To specify")[0] ?? String(error);
    throw new UsageError(message, { hint, cause: error });
  }
  if (parsed.values.help !== true) {
    const { min = 0, max = 0, names = "" } = command.positionals ?? {};
    if (parsed.positionals.length < min) throw new UsageError(`missing argument ${names}`.trim(), { hint });
    if (parsed.positionals.length > max) {
      throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`, { hint });
    }
  }
  return parsed;
}

/** The words before the first option: candidates for the command path. */
function leadingWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith("-")) break;
    words.push(arg);
  }
  return words;
}

function longestMatch(words: readonly string[], commands: readonly CommandSpec[]): CommandSpec | undefined {
  let best: CommandSpec | undefined;
  for (const command of commands) {
    const matches = command.path.every((word, i) => words[i] === word);
    if (matches && (!best || command.path.length > best.path.length)) best = command;
  }
  return best;
}

/** The longest prefix of `words` that some command path starts with. */
function longestGroup(words: readonly string[], commands: readonly CommandSpec[]): string[] {
  let n = 0;
  for (const command of commands) {
    let k = 0;
    while (k < words.length && k < command.path.length - 1 && command.path[k] === words[k]) k++;
    n = Math.max(n, k);
  }
  return words.slice(0, n);
}

let cachedVersion: string | undefined;

/** The version of this package, read once from its package.json. */
function version(): string {
  if (cachedVersion === undefined) {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    cachedVersion = pkg.version ?? "0.0.0";
  }
  return cachedVersion;
}
