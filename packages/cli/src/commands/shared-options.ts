import type { OptionSpec } from "./command.js";

/** How a command picks its manifest: the same cascade as `podkit manifest show`. */
export const MANIFEST_OPTIONS: Record<string, OptionSpec> = {
  manifest: {
    type: "string",
    short: "m",
    valueName: "file",
    help: "the pod's manifest (default: the workspace's .podkit/manifest.toml)",
  },
  set: {
    type: "string",
    multiple: true,
    valueName: "key=value",
    help: "overlay one manifest value (parsed as TOML, else a string); repeatable",
  },
};

/** Options of every command that runs turns (`run`, `resume`). */
export const TURN_OPTIONS: Record<string, OptionSpec> = {
  ...MANIFEST_OPTIONS,
  json: { type: "boolean", help: "print events as JSON Lines instead of text (one object per line)" },
  yes: { type: "boolean", short: "y", help: "approve every bash and write call without asking" },
  "defer-approvals": {
    type: "boolean",
    help: "leave calls that need approval pending (exit code 4) instead of asking; the default without a terminal",
  },
  "hide-reasoning": { type: "boolean", help: "do not show the model's reasoning (shown dimmed by default)" },
  mode: {
    type: "string",
    valueName: "mode",
    help: "permission mode for this run: read_only, default, accept_edits or bypass (default: [permissions] mode)",
  },
  "output-schema": {
    type: "string",
    valueName: "file.json",
    help: "a typed answer: the JSON Schema file it is checked against; stdout carries only its JSON (docs/output.md)",
  },
};

/** `--json` on listings. */
export const JSON_OPTION: Record<string, OptionSpec> = {
  json: { type: "boolean", help: "print machine-readable JSON instead" },
};
