import { createHash } from "node:crypto";
import { lstat, readdir, realpath } from "node:fs/promises";
import type { Scope, SkillsConfig } from "@podkit/manifest";
import { SkillDefinitionError } from "./errors.js";
import { parseSkillFile, type SkillDefinition } from "./skill-file.js";
import { isInside, readContained, resolveInside } from "./skill-paths.js";

/** A skill found on disk: what its SKILL.md says, its digest and where it is. */
export interface SkillEntry extends SkillDefinition {
  /** `sha256:<hex>` of the SKILL.md bytes. */
  readonly digest: string;
  /** The skill's directory, canonical. */
  readonly dir: string;
  /** Its SKILL.md, canonical. */
  readonly file: string;
}

/** The skills the configured directories hold now, by name in name order, and the problems found. */
export interface SkillScan {
  readonly skills: ReadonlyMap<string, SkillEntry>;
  readonly problems: readonly SkillDefinitionError[];
}

/** Where skills are looked for and what the scope lets podkit read. */
export interface SkillSources {
  readonly config: SkillsConfig;
  /** The workspace, canonical: every skill directory stays inside it. */
  readonly workspace: string;
  readonly scope: Scope;
}

/** `sha256:<hex>` of `bytes`. */
export function skillDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * Reads every skill of the configured directories, in their order: each subdirectory holding a
 * SKILL.md is a skill (`[skills] enabled = [...]` keeps those it names). Everything read is
 * untrusted — a directory or SKILL.md that leads outside its skills directory through a link, a
 * file over the size limit, one that is not UTF-8 or not a valid SKILL.md, a name taken by an
 * earlier directory — is a problem reported with its file, never a skill. A skills directory that
 * does not exist holds no skills; a SKILL.md a scope deny rule hides is left out.
 */
export async function scanSkills(sources: SkillSources): Promise<SkillScan> {
  const skills = new Map<string, SkillEntry>();
  const problems: SkillDefinitionError[] = [];
  const only = sources.config.only === undefined ? undefined : new Set(sources.config.only);
  for (const configured of sources.config.dirs) {
    let root: string;
    try {
      root = await realpath(configured);
    } catch {
      continue;
    }
    if (!isInside(root, sources.workspace)) {
      problems.push(
        new SkillDefinitionError(
          { file: configured },
          `the skills directory now leads outside the workspace, to ${root}`,
        ),
      );
      continue;
    }
    let names: string[];
    try {
      names = (await readdir(root)).filter((name) => !name.startsWith(".")).sort();
    } catch (error) {
      problems.push(new SkillDefinitionError({ file: root }, `cannot be listed (${errorCode(error)})`));
      continue;
    }
    for (const name of names) {
      if (only !== undefined && !only.has(name)) continue;
      const found = await readSkill(root, name, sources.scope);
      if (found === undefined) continue;
      if ("problem" in found) {
        problems.push(found.problem);
        continue;
      }
      const earlier = skills.get(found.name);
      if (earlier !== undefined) {
        problems.push(
          new SkillDefinitionError(
            { file: found.file, key: "name" },
            `a skill named "${found.name}" is also in ${earlier.dir}; skill names are unique across [skills] dirs`,
          ),
        );
        continue;
      }
      skills.set(found.name, found);
    }
  }
  const sorted = new Map([...skills.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { skills: sorted, problems };
}

/** One entry of a skills directory: a skill, a problem, or undefined (not a skill directory). */
async function readSkill(
  root: string,
  name: string,
  scope: Scope,
): Promise<SkillEntry | { problem: SkillDefinitionError } | undefined> {
  const problem = (file: string, text: string) => ({ problem: new SkillDefinitionError({ file }, text) });
  const dir = await resolveInside(root, name);
  if (!dir.ok) return dir.missing ? undefined : problem(`${root}/${name}`, `skill directory: ${dir.problem}`);
  if (!(await lstat(dir.path).catch(() => undefined))?.isDirectory()) return undefined;
  const file = await resolveInside(dir.path, "SKILL.md");
  if (!file.ok) return file.missing ? undefined : problem(`${dir.path}/SKILL.md`, file.problem);
  const denied = await scope.check(file.path, "read");
  if (!denied.ok && denied.reason === "denied-by-rule") return undefined;
  const read = await readContained(file.path);
  if (!read.ok) return problem(file.path, read.problem);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
  } catch {
    return problem(file.path, "is not UTF-8 text");
  }
  try {
    const definition = parseSkillFile(text, file.path, name);
    return { ...definition, digest: skillDigest(read.bytes), dir: dir.path, file: file.path };
  } catch (error) {
    if (SkillDefinitionError.isInstance(error)) return { problem: error };
    throw error;
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
