import { sep } from "node:path";
import { builtinPromptsDir } from "../builtin-resources.js";

/** Reads of the builtin prompt files, by path, shared by every pod of the process. */
const reads = new Map<string, Promise<unknown>>();

/**
 * `read()` of a file of this package's own `resources/prompts`, done once per process: those
 * files ship inside the installed package and do not change while it runs, so every pod built or
 * restored after the first skips their `realpath` and read calls. A file elsewhere (a user's or a
 * workspace's prompt, a builtin directory given as an override) is read every time; a failed read
 * is not kept.
 */
export function readBuiltinOnce<T>(file: string, read: () => Promise<T>): Promise<T> {
  if (!file.startsWith(`${builtinPromptsDir()}${sep}`)) return read();
  let pending = reads.get(file) as Promise<T> | undefined;
  if (pending === undefined) {
    pending = read();
    reads.set(file, pending);
    pending.catch(() => reads.delete(file));
  }
  return pending;
}
