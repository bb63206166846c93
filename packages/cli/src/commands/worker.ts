import { type CommandSpec, lazyRun } from "./command.js";

/** `podkit worker` */
export const worker: CommandSpec = {
  path: ["worker"],
  summary: "claim and run queued runs of the given pods until Ctrl-C (which drains)",
  usage: "worker [--manifest <file>]... [--concurrency <n>] [--set key=value]... [--json]",
  details: [
    "Serves the pod of each --manifest (default: the workspace's). Each run restores its session from",
    "the PostgreSQL store and continues where the log says it stands; a run whose worker died is taken",
    "over by another after its heartbeat lapses (docs/dispatch.md). Ctrl-C or SIGTERM drains: runs in",
    "progress finish, nothing new is claimed; a second Ctrl-C hands them back to the queue.",
  ].join("\n"),
  options: {
    manifest: {
      type: "string",
      short: "m",
      multiple: true,
      valueName: "file",
      help: "a pod's manifest; repeat for several pods (default: the workspace's .podkit/manifest.toml)",
    },
    set: {
      type: "string",
      multiple: true,
      valueName: "key=value",
      help: "overlay one manifest value on every manifest; repeatable",
    },
    concurrency: { type: "string", valueName: "n", help: "runs in progress at once (default 1)" },
    json: { type: "boolean", help: "print what the worker does as JSON Lines" },
  },
  run: lazyRun(() => import("../actions/worker.js")),
};
