import { type CommandSpec, lazyRun } from "./command.js";
import { JSON_OPTION, MANIFEST_OPTIONS } from "./shared-options.js";

/** `podkit policy check <session>...` */
export const policyCheck: CommandSpec = {
  path: ["policy", "check"],
  summary: "shadow mode: list the recorded tool calls a manifest's permissions would deny or ask about",
  usage:
    "policy check <session>... [--manifest <file>] [--set key=value]... [--mode <mode>] [--tree] [--json]",
  details: [
    "Shadow mode (docs/permissions.md): every tool call recorded in the sessions (each segment, each",
    "call once) goes through the pod's permission check — the mode and [[permissions.rule]] of the",
    "manifest given — without running anything. Each call the manifest would deny or ask about is one",
    "line, then a summary. In read_only a tool is judged by its declared effect; a tool of an MCP",
    "server or a tool package (neither is started) counts as changing things. The builtin approval",
    "policy (bash, confirm_writes) and hooks are not part of the check.",
    "Exit code: 0 when no call would be denied or asked about, 1 when some would (or on an error).",
  ].join("\n"),
  options: {
    ...MANIFEST_OPTIONS,
    mode: {
      type: "string",
      valueName: "mode",
      help: "check under this permission mode instead of the manifest's: read_only, default, accept_edits or bypass",
    },
    tree: {
      type: "boolean",
      help: "also check every sub-pod session under each one, under its role's mode and rules",
    },
    ...JSON_OPTION,
  },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY, names: "<session>..." },
  run: lazyRun(() => import("../actions/policy-check.js")),
};
