import type { LoadedManifest } from "@podkit/manifest";
import type { PodHooks } from "@podkit/pod";
import { oneLine } from "./event-printer.js";

/** A person's answer to "run this call?". */
export type Approval = "yes" | "no" | "always";

/** Asks a person about one tool call; undefined when nobody can be asked (no terminal). */
export type AskApproval = (question: string, signal?: AbortSignal) => Promise<Approval>;

/** The tools whose calls wait for approval: `bash`, plus the write tools with `[tools] confirm_writes`. */
export function toolsNeedingApproval(loaded: LoadedManifest): Set<string> {
  const names = new Set(["bash"]);
  if (loaded.manifest.tools.confirm_writes) {
    names.add("write_file");
    names.add("edit_file");
  }
  return names;
}

/**
 * The `preToolCall` hook that gates `names`: with `yes` everything passes; otherwise `ask` is
 * asked (y/n/always, "always" covers that tool for the rest of the process); without `ask` the
 * call is denied with a reason saying how to allow it. A denial reaches the model as the call's
 * error result, never as a crash.
 */
export function approvalHook(options: {
  names: ReadonlySet<string>;
  yes: boolean;
  ask?: AskApproval;
  /** Told about each denial (a denied call has no tool events of its own). */
  onDeny?: (call: { name: string; arguments: string }, reason: string) => void;
}): PodHooks {
  const always = new Set<string>();
  const deny = (call: { name: string; arguments: string }, reason: string) => {
    options.onDeny?.(call, reason);
    return { action: "deny" as const, reason };
  };
  return {
    async preToolCall(call) {
      if (!options.names.has(call.name) || options.yes || always.has(call.name))
        return { action: "continue" };
      if (options.ask === undefined) {
        return deny(
          call,
          `${call.name} calls need approval and podkit is not running in a terminal; the user can rerun with --yes to allow them`,
        );
      }
      const answer = await options.ask(
        `Allow ${call.name}(${approvalSubject(call.arguments)})? [y]es / [n]o / [a]lways: `,
      );
      if (answer === "always") always.add(call.name);
      if (answer === "no") return deny(call, `the user denied this ${call.name} call`);
      return { action: "continue" };
    },
  };
}

/** `y`, `yes`, `n`, `no`, `a`, `always` (any case); anything else is no answer yet. */
export function parseApproval(line: string): Approval | undefined {
  const word = line.trim().toLowerCase();
  if (word === "y" || word === "yes") return "yes";
  if (word === "n" || word === "no") return "no";
  if (word === "a" || word === "always") return "always";
  return undefined;
}

/** What the approval question names: the command of a bash call, the path of a file call, else the arguments. */
function approvalSubject(json: string): string {
  try {
    const args = JSON.parse(json) as Record<string, unknown>;
    if (typeof args.command === "string") return oneLine(args.command, 200);
    if (typeof args.path === "string") return args.path;
  } catch {
    // shown raw below
  }
  return oneLine(json, 200);
}
