import type { CommandSpec } from "./commands/command.js";

const GLOBAL_OPTIONS = [
  ["-h, --help", "show help (also after any command)"],
  ["--version", "print the version"],
  ["--workspace <dir>", "work in <dir> (default: the nearest ancestor of the cwd holding .podkit/)"],
  ["--debug", "print stack traces of errors"],
] as const;

/** What the process exit code means, for `podkit --help` and docs/cli.md. */
export const EXIT_CODES = [
  ["0", "success"],
  ["1", "an error in the manifest, files, environment or session (one line and a hint on stderr)"],
  ["2", "the command line is wrong (unknown command or option, missing argument)"],
  ["3", "run/resume with a prompt: the turn stopped without a final answer (max_turns, a pause)"],
  ["4", "run/resume: awaiting approval (podkit approve <session> <call>, then podkit resume <session>)"],
  ["5", "eval --ci: a case regressed beyond --tolerance (the last line says N passed, N failed)"],
  ["70", "an internal error of podkit (rerun with --debug and report the stack trace)"],
  ["130", "run/resume with a prompt: interrupted by Ctrl-C (the session is kept; resume continues it)"],
] as const;

/** `podkit --help`: every command with its one-line summary. */
export function globalHelp(commands: readonly CommandSpec[], version: string): string {
  const width = Math.max(...commands.map((c) => c.path.join(" ").length), 10) + 2;
  return [
    `podkit ${version} — a runtime for LLM agents ("pods") declared in TOML manifests`,
    "",
    "Usage: podkit <command> [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.path.join(" ").padEnd(width)}${c.summary}`),
    "",
    "Options:",
    ...GLOBAL_OPTIONS.map(([flag, text]) => `  ${flag.padEnd(width)}${text}`),
    "",
    "Exit codes:",
    ...EXIT_CODES.map(([code, text]) => `  ${code.padEnd(width)}${text}`),
    "",
    'Run "podkit <command> --help" for the options of a command.',
  ].join("\n");
}

/** `podkit <group>` without a subcommand: the commands under it. */
export function groupHelp(group: readonly string[], commands: readonly CommandSpec[]): string {
  const inGroup = commands.filter((c) => group.every((word, i) => c.path[i] === word));
  const width = Math.max(...inGroup.map((c) => c.path.join(" ").length)) + 2;
  return [
    `Usage: podkit ${group.join(" ")} <command> [options]`,
    "",
    "Commands:",
    ...inGroup.map((c) => `  ${c.path.join(" ").padEnd(width)}${c.summary}`),
  ].join("\n");
}

/** `podkit <command> --help`: synopsis, description and options. */
export function commandHelp(command: CommandSpec): string {
  const options = Object.entries(command.options ?? {}).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "string" ? ` <${spec.valueName ?? "value"}>` : ""}`;
    return [flag, spec.help] as const;
  });
  const all = [
    ...options,
    ["-h, --help", "show this help"] as const,
    [
      "--workspace <dir>",
      "the workspace (default: the nearest ancestor of the cwd holding .podkit/)",
    ] as const,
    ["--debug", "print stack traces of errors"] as const,
  ];
  const width = Math.max(...all.map(([flag]) => flag.length)) + 2;
  return [
    `Usage: podkit ${command.usage}`,
    "",
    command.summary.charAt(0).toUpperCase() + command.summary.slice(1),
    ...(command.details ? ["", command.details] : []),
    "",
    "Options:",
    ...all.map(([flag, text]) => `  ${flag.padEnd(width)}${text}`),
  ].join("\n");
}
