import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { processWarningSink, type WarningSink } from "../warnings.js";

/**
 * Reads `<workspace>/AGENTS.md` whole, at materialization time. Missing → `undefined`
 * silently; unreadable or not valid UTF-8 → `undefined` plus a warning. Never throws.
 */
export async function readAgentsMd(
  workspace: string,
  options?: { onWarning?: WarningSink },
): Promise<string | undefined> {
  const file = join(workspace, "AGENTS.md");
  const warn = options?.onWarning ?? processWarningSink;
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    warn({ code: "agents_md.unreadable", file, message: `ignoring ${file}: ${(error as Error).message}` });
    return undefined;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    warn({ code: "agents_md.unreadable", file, message: `ignoring ${file}: it is not valid UTF-8` });
    return undefined;
  }
}
