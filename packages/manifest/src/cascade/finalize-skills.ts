import { resolve, sep } from "node:path";
import { CLAUDE_SKILLS_DIR, SKILLS_DEFAULTS } from "../defaults.js";
import type { ManifestIssue } from "../errors.js";
import type { SkillsConfig } from "../resolved-manifest.js";
import type { ManifestLayerData } from "../schema/layer-schema.js";
import { canonicalPath } from "../scope/canonical-path.js";

type At = (keyPath: string, problem: string) => ManifestIssue;

/**
 * `[skills]` after the cascade: on when the table is present and `enabled` is not `false`. Each
 * directory is relative to the workspace (not to the layer's file: skills belong to the project)
 * and must stay inside it once canonical — a `.podkit/skills` that is a symlink to elsewhere is
 * refused — because what a skill says reaches the system prompt and may pre-approve tools.
 * `claude = true` adds `.claude/skills` after the listed directories.
 */
export async function finalizeSkills(
  merged: ManifestLayerData,
  workspace: string,
  fromBuiltin: (keyPath: string) => void,
  at: At,
  issues: ManifestIssue[],
): Promise<SkillsConfig | undefined> {
  const set = merged.skills;
  if (set === undefined || set.enabled === false) return undefined;
  const fill = <K extends keyof typeof SKILLS_DEFAULTS>(key: K) => {
    if (set[key] === undefined) fromBuiltin(`skills.${key}`);
    return set[key] ?? SKILLS_DEFAULTS[key];
  };
  const listed = fill("dirs");
  const written = [...listed];
  if (set.claude === true && !written.some((dir) => samePath(workspace, dir, CLAUDE_SKILLS_DIR)))
    written.push(CLAUDE_SKILLS_DIR);
  const root = await canonicalPath(workspace);
  const dirs: string[] = [];
  for (const [i, dir] of written.entries()) {
    const key = i < listed.length ? "skills.dirs" : "skills.claude";
    const problem = dirProblem(dir);
    if (problem !== undefined) {
      issues.push(at(key, problem));
      continue;
    }
    const canonical = await canonicalPath(resolve(workspace, dir));
    if (!canonical.ok || !root.ok) {
      const detail = canonical.ok ? "the workspace cannot be resolved" : canonical.detail;
      issues.push(at(key, `skill directory ${dir} cannot be used: ${detail}`));
      continue;
    }
    if (!inside(canonical.path, root.path)) {
      issues.push(
        at(
          key,
          `skill directory ${dir} resolves to ${canonical.path}, outside the workspace ${root.path}; skills must live inside the workspace`,
        ),
      );
      continue;
    }
    if (!dirs.includes(canonical.path)) dirs.push(canonical.path);
  }
  return {
    dirs,
    ...(Array.isArray(set.enabled) ? { only: [...new Set(set.enabled)] } : {}),
    listing_budget_tokens: fill("listing_budget_tokens"),
    on_over_budget: fill("on_over_budget"),
    reinject_budget_tokens: fill("reinject_budget_tokens"),
    allow_tools: fill("allow_tools"),
  };
}

function dirProblem(dir: string): string | undefined {
  if (dir.includes("\0")) return "the skill directory contains a NUL character";
  if (dir === "~" || dir.startsWith("~/"))
    return '"~" is not expanded in a skill directory; write a path relative to the workspace';
  if (dir.startsWith("$"))
    return `a skill directory cannot be a $prefix reference ("${dir}"); write a path relative to the workspace`;
  return undefined;
}

function samePath(workspace: string, a: string, b: string): boolean {
  return resolve(workspace, a) === resolve(workspace, b);
}

/** `path` is `dir` or below it, by whole components. */
function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
