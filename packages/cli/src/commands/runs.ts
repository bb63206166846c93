import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

const load = () => import("../actions/runs.js");

/** `podkit runs list` */
export const runsList: CommandSpec = {
  path: ["runs", "list"],
  summary: "list dispatched runs, newest first",
  usage: "runs list [--state <state>]... [--session <id>] [--limit <n>] [--json] [--manifest <file>]",
  options: {
    state: {
      type: "string",
      multiple: true,
      valueName: "state",
      help: "queued, running, retrying, completed, awaiting_approval, cancelled or dead; repeatable",
    },
    session: { type: "string", valueName: "id", help: "only the runs of this session" },
    limit: { type: "string", valueName: "n", help: "at most n runs (default 50)" },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  run: lazyRun(async () => ({ run: (await load()).list })),
};

/** `podkit runs show <run>` */
export const runsShow: CommandSpec = {
  path: ["runs", "show"],
  summary: "a run's state, attempts, workers and failure, from the queue and the session log",
  usage: "runs show <run> [--json] [--manifest <file>]",
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  positionals: { min: 1, max: 1, names: "<run>" },
  run: lazyRun(async () => ({ run: (await load()).show })),
};

/** `podkit runs cancel <run>` */
export const runsCancel: CommandSpec = {
  path: ["runs", "cancel"],
  summary: "cancel a run: a queued one never starts, a running one is interrupted where it runs",
  usage: "runs cancel <run> [--json] [--manifest <file>]",
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  positionals: { min: 1, max: 1, names: "<run>" },
  run: lazyRun(async () => ({ run: (await load()).cancel })),
};
