import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

const load = () => import("../actions/memory.js");

/** `podkit memory extract <session>` */
export const memoryExtract: CommandSpec = {
  path: ["memory", "extract"],
  summary: "extract memory candidates from a session into the staging area",
  usage: "memory extract <session> [--json] [--manifest <file>]",
  details: [
    "Takes the session's head segment from its extract pointer on, has the extract worker pick",
    "decisions, discussions, attempts and requests, and writes one staging file (nothing for an",
    "empty result). The pointer advances only on success. Calls the model.",
  ].join("\n"),
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  positionals: { min: 1, max: 1, names: "<session>" },
  run: lazyRun(async () => ({ run: (await load()).extract })),
};

/** `podkit memory consolidate` */
export const memoryConsolidate: CommandSpec = {
  path: ["memory", "consolidate"],
  summary: "fold the staging area into durable memory (decisions, requests, knowledge, summary)",
  usage: "memory consolidate [--json] [--manifest <file>]",
  details: [
    "Runs consolidation now, whatever the thresholds, when staging is not empty: every write is",
    "linted and audited; on success the consumed staging files are deleted. Calls the model.",
  ].join("\n"),
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  run: lazyRun(async () => ({ run: (await load()).consolidate })),
};

/** `podkit memory lint` */
export const memoryLint: CommandSpec = {
  path: ["memory", "lint"],
  summary: "check the workspace's memory records (exit 1 when there are errors)",
  usage: "memory lint [--json] [--manifest <file>]",
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  run: lazyRun(async () => ({ run: (await load()).lint })),
};

/** `podkit memory query <text>` */
export const memoryQuery: CommandSpec = {
  path: ["memory", "query"],
  summary: "search the memory records for a literal text (case-insensitive)",
  usage: "memory query <text> [--kind <kind>] [--limit <n>] [--json] [--manifest <file>]",
  options: {
    kind: {
      type: "string",
      valueName: "kind",
      help: "only records of this kind (decision, request, knowledge, summary)",
    },
    limit: { type: "string", valueName: "n", help: "records shown at most (default 20)" },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  positionals: { min: 1, max: 1, names: "<text>" },
  run: lazyRun(async () => ({ run: (await load()).query })),
};
