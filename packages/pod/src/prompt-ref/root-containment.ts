import { realpath } from "node:fs/promises";
import { join, relative, sep } from "node:path";

/** A path component that resolves (through a symbolic link) outside the directory owning it. */
export interface RootEscape {
  /** The component as written, e.g. `/ws/.podkit`. */
  readonly link: string;
  /** Where it really points, e.g. `/elsewhere/config`. */
  readonly target: string;
  /** The real path of the owning directory it had to stay inside. */
  readonly owner: string;
}

/** True when `path` is `dir` or lies below it (both already canonical). */
export function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * Checks that `path` (a prefix root or a pack file below `owner`, such as
 * `<workspace>/.podkit/prompts`) resolves inside `owner`, component by component, so a cloned
 * repository cannot point `.podkit` or `.podkit/prompts` elsewhere with a symbolic link. Returns
 * the first component that escapes, or `null`. Components that do not exist end the walk: there
 * is nothing to read through them.
 */
export async function findRootEscape(owner: string, path: string): Promise<RootEscape | null> {
  const ownerReal = await realpath(owner).catch(() => null);
  if (ownerReal === null) return null;
  const rest = relative(owner, path);
  if (rest === "" || rest.startsWith("..")) return null;
  let current = owner;
  for (const part of rest.split(sep)) {
    current = join(current, part);
    let real: string;
    try {
      real = await realpath(current);
    } catch {
      return null;
    }
    if (!isInside(real, ownerReal)) return { link: current, target: real, owner: ownerReal };
  }
  return null;
}

/** One sentence for a refusal: which component points where, and what it had to stay inside. */
export function describeRootEscape(breach: RootEscape): string {
  return `${breach.link} resolves to ${breach.target} (through a symbolic link), outside ${breach.owner} that owns it`;
}
