import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import matter from "gray-matter";
import { describe, expect, it } from "vitest";
import { SkillDefinitionError } from "../src/skills/errors.js";
import { parseSkillFile } from "../src/skills/skill-file.js";
import { bundledFiles, bundledPathProblem, resolveInside } from "../src/skills/skill-paths.js";
import { caught, useTempDirs } from "./helpers.js";
import { skillMarkdown } from "./support/skills.js";

const tempDir = useTempDirs();

/** The `SkillDefinitionError` parsing `text` as `/s/<dir>/SKILL.md` throws. */
function definitionError(text: string, dir = "pdf"): SkillDefinitionError {
  try {
    parseSkillFile(text, `/s/${dir}/SKILL.md`, dir);
  } catch (error) {
    if (SkillDefinitionError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a SkillDefinitionError");
}

describe("SKILL.md", () => {
  it("reads name, description (on one line), allowed-tools and the body", () => {
    const text = [
      "---",
      "name: pdf",
      "description: >",
      "  Fills PDF forms.",
      "  Use it for any PDF.",
      'allowed-tools: "Read, Bash(git status:*)"',
      "license: MIT",
      "---",
      "",
      "# PDF",
      "Run scripts/fill.py.",
      "",
    ].join("\n");
    expect(parseSkillFile(text, "/s/pdf/SKILL.md", "pdf")).toEqual({
      name: "pdf",
      description: "Fills PDF forms. Use it for any PDF.",
      allowedTools: ["Read", "Bash(git status:*)"],
      body: "\n# PDF\nRun scripts/fill.py.\n",
    });
    const listed = parseSkillFile(
      skillMarkdown({ name: "pdf", description: "d", allowedTools: ["write_file", "bash(npm test)"] }),
      "/s/pdf/SKILL.md",
      "pdf",
    );
    expect(listed.allowedTools).toEqual(["write_file", "bash(npm test)"]);
  });

  it("a missing or bad key is an error naming the file, the line and the key", () => {
    const missing = definitionError("---\nname: pdf\n---\nbody\n");
    expect(missing.message).toBe(
      "/s/pdf/SKILL.md:1: description: missing: every skill needs description: (what it does and when to use it; it is listed in the system prompt)",
    );
    expect([missing.file, missing.line, missing.key]).toEqual(["/s/pdf/SKILL.md", 1, "description"]);
    expect(missing.hint).toContain("docs/skills.md");

    const empty = definitionError('---\nname: pdf\ndescription: ""\n---\n');
    expect([empty.line, empty.key]).toEqual([3, "description"]);

    const upper = definitionError("---\nname: PDF Tools\ndescription: d\n---\n");
    expect([upper.line, upper.key]).toEqual([2, "name"]);
    expect(upper.message).toContain('got "PDF Tools"');

    const other = definitionError("---\nname: docx\ndescription: d\n---\n");
    expect(other.message).toContain('"docx" is not the name of its directory "pdf"');

    const long = definitionError(`---\nname: pdf\ndescription: ${"x".repeat(1100)}\n---\n`);
    expect(long.message).toContain("1100 characters long, over the limit of 1024");

    const tools = definitionError("---\nname: pdf\ndescription: d\nallowed-tools: {bash: true}\n---\n");
    expect([tools.line, tools.key]).toEqual([4, "allowed-tools"]);
  });

  it("YAML that does not parse names its line; no front matter, or an unclosed one, line 1", () => {
    const yaml = definitionError("---\nname: pdf\ndescription: [unclosed\n---\n");
    expect(yaml.message).toMatch(/^\/s\/pdf\/SKILL\.md:\d+: the front matter is not valid YAML/);
    expect(yaml.line).toBeGreaterThanOrEqual(3);
    expect(definitionError("# no front matter\n").line).toBe(1);
    expect(definitionError("---\nname: pdf\n").message).toContain("not closed");
    expect(definitionError("---\n- a\n- b\n---\n").message).toContain("must be a mapping");
  });

  it("front matter in another language is never evaluated: stock gray-matter runs `---js`, the skill loader refuses it", () => {
    const marker = `__podkit_skill_eval_${process.pid}`;
    const text = `---js\n{ name: "pdf", description: (globalThis.${marker} = "ran") }\n---\nbody\n`;
    const global = globalThis as Record<string, unknown>;
    // Positive control: gray-matter as shipped evaluates the block as JavaScript.
    expect(matter(text).data).toMatchObject({ name: "pdf" });
    expect(global[marker]).toBe("ran");
    delete global[marker];

    const error = definitionError(text);
    expect(error.line).toBe(1);
    expect(global[marker]).toBeUndefined();
    // Also with a language tag after a plain opening line's whitespace, and a JSON block.
    expect(definitionError(`--- js\n{}\n---\n`).line).toBe(1);
    expect(global[marker]).toBeUndefined();
  });
});

describe("bundled files", () => {
  it("a path that is empty, absolute, has .. or . segments, a backslash or a NUL is refused before the disk is asked", () => {
    for (const path of ["", "/etc/passwd", "../other/SKILL.md", "a/../../x", "./x", "a//b", "a\\b", "a\0b"]) {
      expect(bundledPathProblem(path), path).toBeDefined();
    }
    for (const path of ["scripts/fill.py", "README.md", "a.b/c..d"])
      expect(bundledPathProblem(path)).toBeUndefined();
  });

  it("a symbolic link that leads out of the skill's directory is refused; one that stays inside is followed", async () => {
    const root = await tempDir("bundled");
    const skill = join(root, "skills", "pdf");
    await mkdir(join(skill, "scripts"), { recursive: true });
    await writeFile(join(root, "secret.txt"), "the secret");
    await writeFile(join(skill, "scripts", "fill.py"), "print(1)");
    await symlink(join(root, "secret.txt"), join(skill, "leak.txt"));
    await symlink("scripts/fill.py", join(skill, "alias.py"));
    // Positive control: without the containment the link reads the secret.
    expect(await readFile(join(skill, "leak.txt"), "utf8")).toBe("the secret");

    const leak = await resolveInside(skill, "leak.txt");
    expect(leak).toEqual({ ok: false, problem: "it leads out of the skill's directory (a symbolic link)" });
    expect(await resolveInside(skill, "alias.py")).toEqual({
      ok: true,
      path: join(skill, "scripts", "fill.py"),
    });
    expect(await resolveInside(skill, "absent.txt")).toMatchObject({ ok: false, missing: true });
    // The listing names only what stays inside.
    expect(await bundledFiles(skill)).toEqual({ files: ["alias.py", "scripts/fill.py"], omitted: 0 });
  });

  it("the SkillDefinitionError of a missing description is a typed error with its own marker", async () => {
    const error = await caught(() => parseSkillFile("---\nname: pdf\n---\n", "/s/pdf/SKILL.md", "pdf"));
    expect(SkillDefinitionError.isInstance(error)).toBe(true);
  });
});
