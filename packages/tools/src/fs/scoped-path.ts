import { isAbsolute } from "node:path";
import type { ToolDenial, ToolOutput } from "@podkit/llm-worker";
import type { Permission, Scope } from "@podkit/manifest";
import type { PodkitFiles } from "../containment/podkit-files.js";
import { PODKIT_FILES_RULE, scopeDenial, workspacePath } from "../containment/rule-text.js";
import type { FileTracking } from "../tracking/file-tracking.js";
import { fsErrorMessage } from "./fs-error-message.js";

/** What every filesystem tool needs: the scope and the workspace relative paths start from. */
export interface FsToolContext {
  readonly scope: Scope;
  readonly workspace: string;
  /**
   * Output bytes a tool may produce (the manifest's `[worker.tool_output]` cap for it, less room
   * for the summary); the tools stop there and say how to get the rest. Default 48 KiB.
   */
  readonly outputBudget?: (toolName: string) => number;
  /** podkit's own directories: never writable through a file tool, whatever the scope grants. */
  readonly podkitFiles?: PodkitFiles;
  /** The pod's file tracking: the writing tools report what they changed (docs/rewind.md). */
  readonly files?: FileTracking;
}

/**
 * A path the scope allowed, in canonical form, and how to show it to the model; or the refusal,
 * with `denied` when a containment rule refused it (not for a path that is merely unusable).
 */
export type ScopedPath =
  | { ok: true; path: string; shown: string }
  | { ok: false; message: string; denied?: ToolDenial };

/** The error output of a refused path: its message, and `denied` for the pod's decision log. */
export function refusedOutput(refused: Extract<ScopedPath, { ok: false }>): ToolOutput {
  return { summary: refused.message, is_error: true, ...(refused.denied ? { denied: refused.denied } : {}) };
}

/**
 * Checks `path` (relative to the workspace, or absolute) against the scope on its canonical
 * form. A refusal carries the scope's own words (which rule refused, or that no rule allows it)
 * and never anything read from the file. Called on every tool call: nothing is cached, so a path
 * swapped for a symlink since the last call is judged by where it points now. Never throws: a
 * file-system error while canonicalizing is a refusal too. A write inside podkit's own
 * directories is refused even where the scope grants write (`podkitFiles`).
 */
export async function checkToolPath(ctx: FsToolContext, path: string, want: Permission): Promise<ScopedPath> {
  const tilde = homeShorthand(path);
  if (tilde) return { ok: false, message: tilde };
  // Joined, not `resolve`d: a lexical fold of `..` would disagree with the OS (`link/..` is the
  // link target's parent); the scope canonicalizes physically.
  const absolute = isAbsolute(path) ? path : `${ctx.workspace}/${path}`;
  // Refused before the scope walks thousands of missing components of a path no call could open.
  if (tooLong(absolute)) return { ok: false, message: fsErrorMessage({ code: "ENAMETOOLONG" }, path) };
  let check: Awaited<ReturnType<Scope["check"]>>;
  try {
    check = await ctx.scope.check(absolute, want);
  } catch (error) {
    return { ok: false, message: fsErrorMessage(error, path) };
  }
  if (check.ok) {
    const shown = shownPath(ctx, check.path);
    if (want === "write" && ctx.podkitFiles?.contains(check.path)) {
      const message = `write access to "${shown}" denied: it is one of podkit's own files (the workspace's .podkit/ directory, the sessions, the memory), which nothing inside a pod may change`;
      return { ok: false, message, denied: { by: "scope", rule: PODKIT_FILES_RULE, reason: message } };
    }
    return { ok: true, path: check.path, shown };
  }
  const hint =
    check.reason === "not-allowed" || check.reason === "read-only"
      ? ` ${want === "write" ? "Writable" : "Readable"} locations are listed in the scope summary.`
      : "";
  const denied = scopeDenial(check, ctx.workspace);
  return { ok: false, message: `${check.message}.${hint}`, ...(denied ? { denied } : {}) };
}

/** Linux's PATH_MAX (with the NUL) and NAME_MAX, in bytes. */
const PATH_MAX = 4096;
const NAME_MAX = 255;

function tooLong(absolute: string): boolean {
  if (Buffer.byteLength(absolute) >= PATH_MAX) return true;
  return absolute.split("/").some((name) => name.length > NAME_MAX / 3 && Buffer.byteLength(name) > NAME_MAX);
}

/**
 * A path whose first component starts with `~` (`~`, `~/notes.md`, `~alice/x`) means a home
 * directory to a shell but would be taken literally here, making a `~` directory in the
 * workspace: refused with the way to say either thing. `a~b`, `./~x` and `dir/~` are literal
 * names and pass.
 */
function homeShorthand(path: string): string | undefined {
  if (!path.startsWith("~")) return undefined;
  const first = path.split("/", 1)[0] as string;
  return `"${path}" starts with "${first}", which is not expanded: paths are relative to the workspace (or absolute). Give the absolute path of a home directory, or write "./${path}" for a name that really starts with "~" inside the workspace.`;
}

/** A canonical path as the model should see it: relative to the workspace when inside it. */
export function shownPath(ctx: Pick<FsToolContext, "workspace">, canonical: string): string {
  return workspacePath(ctx.workspace, canonical);
}
