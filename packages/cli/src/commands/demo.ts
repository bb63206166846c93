import { type CommandSpec, lazyRun } from "./command.js";

/** `podkit demo` */
export const demo: CommandSpec = {
  path: ["demo"],
  summary: "show the whole system on a scripted session (offline, no API key)",
  usage: "demo [--dir <path>]",
  details: [
    "Starts podkit's provider double (a local HTTP server speaking the Anthropic wire) with a",
    "scripted model, copies examples/demo/ to a scratch workspace and runs a pod there with the",
    "real tools, session log and prompt machinery, narrating each step. The model is scripted;",
    "everything else is the real code. Finishes in seconds and prints where the files are.",
  ].join("\n"),
  options: {
    dir: {
      type: "string",
      valueName: "path",
      help: "the scratch workspace to create (must not exist; default: a new temp directory)",
    },
  },
  run: lazyRun(() => import("../actions/demo.js")),
};
