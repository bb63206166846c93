import { type CommandSpec, lazyRun } from "./command.js";
import { MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit prompt render [--manifest <file>] [--set key=value]...` */
export const promptRender: CommandSpec = {
  path: ["prompt", "render"],
  summary: "print the system prompt a new session of the pod would get (no model call, no API key)",
  usage: "prompt render [--manifest <file>] [--set key=value]...",
  details: [
    "Materializes the system prompt exactly as the first run would: the tool list is final,",
    "AGENTS.md is read, the clock is read once, the template and the catalog's trailing sections",
    "are rendered. Nothing is written and no model is contacted.",
  ].join("\n"),
  options: { ...MANIFEST_OPTIONS },
  run: lazyRun(() => import("../actions/prompt-render.js")),
};
