import { type CommandSpec, lazyRun } from "./command.js";

/** `podkit init [--name <name>] [--model <ref>]` */
export const init: CommandSpec = {
  path: ["init"],
  summary: "write .podkit/manifest.toml in the current directory (never overwrites)",
  usage: "init [--name <name>] [--model <provider/model>]",
  details: [
    "Creates .podkit/manifest.toml with comments explaining each table, making the current",
    "directory a podkit workspace. The pod may read and write the workspace; bash stays off.",
    "An existing manifest is never overwritten.",
  ].join("\n"),
  options: {
    name: { type: "string", valueName: "name", help: "the pod's name (default: the directory's name)" },
    model: {
      type: "string",
      valueName: "provider/model",
      help: 'the model ref (default "anthropic/claude-sonnet-4-5")',
    },
  },
  run: lazyRun(() => import("../actions/init.js")),
};
