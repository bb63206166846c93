import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** One skill as a test writes it: the SKILL.md's parts and the files it bundles. */
export interface SkillSpec {
  name: string;
  description: string;
  body?: string;
  /** `allowed-tools`: a list, or one string as written (`"Read, Bash(git status:*)"`). */
  allowedTools?: readonly string[] | string;
  /** Bundled files, relative to the skill's directory → content. */
  files?: Readonly<Record<string, string>>;
}

/** The SKILL.md text of `spec`: YAML front matter (`name`, `description`, `allowed-tools`), then the body. */
export function skillMarkdown(spec: SkillSpec): string {
  const lines = ["---", `name: ${spec.name}`, `description: ${JSON.stringify(spec.description)}`];
  if (typeof spec.allowedTools === "string")
    lines.push(`allowed-tools: ${JSON.stringify(spec.allowedTools)}`);
  else if (spec.allowedTools !== undefined) {
    lines.push("allowed-tools:", ...spec.allowedTools.map((tool) => `  - ${JSON.stringify(tool)}`));
  }
  lines.push("---", "", spec.body ?? `Instructions of ${spec.name}.`, "");
  return lines.join("\n");
}

/** Writes one skill directory `<dir>/<name>/` (SKILL.md and its bundled files); returns its path. */
export async function writeSkill(dir: string, spec: SkillSpec): Promise<string> {
  const skillDir = join(dir, spec.name);
  await mkdir(skillDir, { recursive: true });
  await writeFile(join(skillDir, "SKILL.md"), skillMarkdown(spec));
  for (const [path, content] of Object.entries(spec.files ?? {})) {
    await mkdir(join(skillDir, path, ".."), { recursive: true });
    await writeFile(join(skillDir, path), content);
  }
  return skillDir;
}

/**
 * Writes `count` skills into the skills directory `dir` (created when missing): `skill-01` …
 * `skill-<count>` (numbers padded to the count's width, so names sort as numbers), each with a
 * description naming a topic of its own and a short body. `spec(i)` overrides parts of skill `i`
 * (1-based). Returns the specs written, in name order.
 */
export async function writeSkills(
  dir: string,
  count: number,
  spec: (index: number) => Partial<SkillSpec> = () => ({}),
): Promise<SkillSpec[]> {
  const width = String(count).length;
  const written: SkillSpec[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `skill-${String(i).padStart(Math.max(2, width), "0")}`;
    const full: SkillSpec = {
      name,
      description: `Handles topic ${i}: use it when the task is about topic number ${i}.`,
      body: `# ${name}\n\nStep 1 for topic ${i}.\nStep 2 for topic ${i}.`,
      ...spec(i),
    };
    await writeSkill(dir, full);
    written.push(full);
  }
  return written;
}
