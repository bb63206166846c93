import { type CommandSpec, lazyRun } from "./command.js";
import { TURN_OPTIONS } from "./shared-options.js";

/** `podkit resume <session> [prompt]` */
export const resume: CommandSpec = {
  path: ["resume"],
  summary: "continue a session: one turn for [prompt], else interactively",
  usage:
    "resume <session> [prompt] [--manifest <file>] [--set key=value]... [--json] [--yes] [--defer-approvals] [--output-schema <file.json>]",
  details: [
    "Restores the session's head segment (its system prompt verbatim, history, usage) and keeps",
    "appending to it; an interrupted turn is closed before the new input. Without [prompt], a run",
    "awaiting approval goes on once its calls are answered (`podkit approve`): allowed calls run",
    "exactly once. Options are those of podkit run; a session started with --output-schema is",
    "resumed with the same schema (it is part of the session's request prefix).",
  ].join("\n"),
  options: { ...TURN_OPTIONS },
  positionals: { min: 1, max: 2, names: "<session> [prompt]" },
  run: lazyRun(() => import("../actions/resume.js")),
};
