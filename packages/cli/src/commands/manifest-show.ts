import { type CommandSpec, lazyRun } from "./command.js";

/** `podkit manifest show [file] [--set key=value]... [--json]` */
export const manifestShow: CommandSpec = {
  path: ["manifest", "show"],
  summary: "print the resolved manifest, which layer set each value, and the scope",
  usage: "manifest show [file] [--set key=value]... [--json]",
  details: [
    "Resolves the manifest through the layer cascade (builtin defaults, then",
    "<user config dir>/manifest.toml, then <workspace>/.podkit/manifest.toml, then [file],",
    "then each --set) and prints the result as TOML with the layer that set each value.",
    "Without [file], the workspace manifest is shown. No model is contacted.",
  ].join("\n"),
  options: {
    set: {
      type: "string",
      multiple: true,
      valueName: "key=value",
      help: "overlay one value (parsed as TOML, else taken as a string); repeatable",
    },
    json: { type: "boolean", help: "print machine-readable JSON instead" },
  },
  positionals: { max: 1, names: "[file]" },
  run: lazyRun(() => import("../actions/manifest-show.js")),
};
