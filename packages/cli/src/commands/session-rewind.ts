import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit session rewind <id> --to-turn N` */
export const sessionRewind: CommandSpec = {
  path: ["session", "rewind"],
  summary: "take a session back to turn N: its conversation, and the files it changed since",
  usage:
    "session rewind <session> --to-turn <n> [--files-only|--conversation-only] [--dry-run] [--force] [--json] [--manifest <file>]",
  details: [
    "The conversation continues in the same session from the end of turn <n> (`podkit resume <session>`",
    "goes on from there, its prompt prefix unchanged for the provider's cache), and every file the",
    "session changed after turn <n> — through write_file, edit_file or bash — gets its content at the",
    "end of that turn back from the session store, or is removed if it did not exist then. All or",
    "nothing: a rerun after a crash finishes or undoes an interrupted rewind. A file changed outside",
    "the pod since the session last wrote it stops the rewind (named, nothing changed) unless --force.",
    "The files are the workspace's (docs/rewind.md).",
  ].join("\n"),
  options: {
    "to-turn": { type: "string", valueName: "n", help: "the last turn to keep (0: before the first)" },
    "files-only": { type: "boolean", help: "restore the files; leave the conversation where it is" },
    "conversation-only": { type: "boolean", help: "rewind the conversation; leave the files as they are" },
    "dry-run": { type: "boolean", help: "print what would change, change nothing" },
    force: { type: "boolean", help: "overwrite files changed outside the pod instead of refusing" },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  positionals: { min: 1, max: 1, names: "<session>" },
  run: lazyRun(async () => ({ run: (await import("../actions/session-rewind.js")).rewind })),
};
