import { type CommandSpec, lazyRun } from "./command.js";
import { TURN_OPTIONS } from "./shared-options.js";

/** `podkit run [prompt]` */
export const run: CommandSpec = {
  path: ["run"],
  summary: "run one turn for [prompt], or an interactive session when no prompt is given",
  usage:
    "run [prompt] [--manifest <file>] [--set key=value]... [--json] [--yes] [--defer-approvals] [--hide-reasoning] [--output-schema <file.json>]",
  details: [
    "Starts a new session of the pod. Text streams as it arrives; each tool call prints one line",
    "with its outcome. bash calls (and write_file/edit_file with [tools] confirm_writes = true)",
    "wait for y (yes), n (no) or a (always) in a terminal, and every question and answer is logged.",
    "Without a terminal (or with --defer-approvals) they stay pending in the log: the command exits",
    "with code 4 and prints the `podkit approve` command to run, then `podkit resume` goes on.",
    "--yes runs them without asking. In an interactive session Ctrl-C interrupts the turn and keeps the",
    "session; Ctrl-C again (or Ctrl-D) at the prompt exits. The session id is printed at the end",
    "with the command that resumes it. With --output-schema (or [output] in the manifest) the answer",
    "is typed: stdout carries only its JSON, one line per finished turn, and everything else goes to",
    "stderr; the exit code is 0 only when the answer matched the schema (docs/output.md).",
  ].join("\n"),
  options: { ...TURN_OPTIONS },
  positionals: { max: 1, names: "[prompt]" },
  run: lazyRun(() => import("../actions/run.js")),
};
