import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit compact <session>` */
export const compact: CommandSpec = {
  path: ["compact"],
  summary: "compact a session now: summarize its older part into a new segment",
  usage: "compact <session> [--json] [--manifest <file>] [--set key=value]...",
  details: [
    "Restores the session and runs the compaction a long session gets automatically ([compaction]",
    "thresholds): the model, given the conversation with the compaction instruction appended,",
    "summarizes the older history; the session continues in a new",
    "segment with the summary and the retained tail. The old segment is never modified. Calls the",
    "model, so it needs the API key of [model].",
  ].join("\n"),
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  positionals: { min: 1, max: 1, names: "<session>" },
  run: lazyRun(() => import("../actions/compact.js")),
};
