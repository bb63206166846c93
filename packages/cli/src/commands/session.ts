import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

const load = () => import("../actions/session.js");

/** `podkit session list` */
export const sessionList: CommandSpec = {
  path: ["session", "list"],
  summary: "list the workspace's sessions, newest first",
  usage: "session list [--json] [--manifest <file>]",
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  run: lazyRun(async () => ({ run: (await load()).list })),
};

/** `podkit session show <id>` */
export const sessionShow: CommandSpec = {
  path: ["session", "show"],
  summary: "print a session's turns, tool calls, usage, compactions and other live branches",
  usage: "session show <session> [--json] [--manifest <file>]",
  options: { ...JSON_OPTION, ...MANIFEST_OPTIONS },
  positionals: { min: 1, max: 1, names: "<session>" },
  run: lazyRun(async () => ({ run: (await load()).show })),
};

/** `podkit session fork <id> [--at-turn N]` */
export const sessionFork: CommandSpec = {
  path: ["session", "fork"],
  summary: "copy a session into a new one, cut after a turn; the source is not changed",
  usage: "session fork <session> [--at-turn <n>] [--json] [--manifest <file>]",
  details: [
    "The new session starts with the state of the source's head at the end of turn <n> (default:",
    "its last finished turn). When the source log has a corrupt line, the fork reads the turns",
    "before it, so --at-turn may name the last good turn.",
  ].join("\n"),
  options: {
    "at-turn": {
      type: "string",
      valueName: "n",
      help: "the last turn to keep (default: the last finished one)",
    },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  positionals: { min: 1, max: 1, names: "<session>" },
  run: lazyRun(async () => ({ run: (await load()).fork })),
};

/** `podkit session doctor [--fix]` */
export const sessionDoctor: CommandSpec = {
  path: ["session", "doctor"],
  summary: "find debris in the session store (sessions without a segment); --fix removes it",
  usage: "session doctor [--fix] [--json] [--manifest <file>]",
  details: [
    "A crash between creating a session and its first write leaves a session directory without a",
    "segment. Listings leave such debris out with a warning; this command names each one and why,",
    "and with --fix removes the directories that hold no segment at all (never one with a log in it).",
  ].join("\n"),
  options: {
    fix: { type: "boolean", help: "remove the debris found (only directories without any segment)" },
    ...JSON_OPTION,
    ...MANIFEST_OPTIONS,
  },
  run: lazyRun(async () => ({ run: (await load()).doctor })),
};
