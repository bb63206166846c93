import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION } from "./shared-options.js";

/** `podkit prompt catalog [key] [--explain] [--manifest <file>]` */
export const promptCatalog: CommandSpec = {
  path: ["prompt", "catalog"],
  summary: "list the pod's internal prompts with the layer and file each comes from",
  usage: "prompt catalog [key] [--explain] [--json] [--manifest <file>]",
  details: [
    "Loads the prompt catalog the way a pod does: builtin resources/prompts/internal.toml, then",
    "<user config dir>/prompts.toml, then <workspace>/.podkit/prompts.toml, then the manifest's",
    "[pod].prompt_pack (later wins, per key). Without [key], lists every key with the layer and",
    "file of its winning value; with [key], prints that value's template source. --explain adds",
    "the layer and file to the source (for every key when no key is given).",
    "--json prints one object per key ({key, layer, file}, plus source with --explain), or the",
    "object of [key] with its source.",
    "The manifest is --manifest <file>, else the workspace's .podkit/manifest.toml when it exists.",
  ].join("\n"),
  options: {
    explain: { type: "boolean", help: "print layer, file and template source" },
    ...JSON_OPTION,
    manifest: { type: "string", valueName: "file", help: "manifest whose [pod].prompt_pack to apply" },
  },
  positionals: { max: 1, names: "[key]" },
  run: lazyRun(() => import("../actions/prompt-catalog.js")),
};
