import { SKILL_NAME_PATTERN } from "@podkit/manifest";
import matter from "gray-matter";
import { SkillDefinitionError } from "./errors.js";

/** What a SKILL.md says (docs/skills.md, "SKILL.md"). */
export interface SkillDefinition {
  readonly name: string;
  /** One line: runs of whitespace (newlines included) are single spaces. */
  readonly description: string;
  /** `allowed-tools` as written, one entry each (`read_file`, `Bash(git status:*)`); empty when unset. */
  readonly allowedTools: readonly string[];
  /** Everything after the front matter. */
  readonly body: string;
}

/** Longest `name` (the Agent Skills format's limit). */
export const SKILL_NAME_MAX = 64;
/** Longest `description`, in characters (the Agent Skills format's limit). */
export const SKILL_DESCRIPTION_MAX = 1024;
const ALLOWED_TOOLS_MAX = 64;

const refuseEngine = () => {
  throw new Error("only YAML front matter is read");
};

/**
 * Reads SKILL.md `text` of the skill directory `dirName`: YAML front matter between two `---`
 * lines with `name` (the directory's name) and `description`, optionally `allowed-tools`; then
 * the body. The file is untrusted: gray-matter would `eval` front matter opened with `---js`, so
 * the opening line must be exactly `---` and every engine but YAML's (js-yaml's safe schema) is
 * refused; results are never cached (gray-matter caches by content unless given options).
 * Throws `SkillDefinitionError` naming `file`, the line and the key.
 */
export function parseSkillFile(text: string, file: string, dirName: string): SkillDefinition {
  const fail = (problem: string, line?: number, key?: string): never => {
    throw new SkillDefinitionError({ file, line, key }, problem);
  };
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = source.split("\n").map((line) => line.replace(/\r$/, ""));
  if (lines[0] !== "---") {
    fail("a SKILL.md starts with front matter: a line `---`, then `name:` and `description:`, then `---`", 1);
  }
  const close = lines.indexOf("---", 1);
  if (close === -1) fail("the front matter is not closed by a line `---`", 1);
  const lineOf = (key: string) => {
    const index = lines.slice(1, close).findIndex((line) => line.startsWith(`${key}:`));
    return index === -1 ? 1 : index + 2;
  };

  let parsed: matter.GrayMatterFile<string>;
  try {
    parsed = matter(source, {
      language: "yaml",
      engines: { javascript: refuseEngine, js: refuseEngine, coffee: refuseEngine, json: refuseEngine },
    });
  } catch (error) {
    const mark = (error as { mark?: { line?: unknown } }).mark;
    // js-yaml counts from 0 at the front matter's first character, the newline after `---`.
    const line = typeof mark?.line === "number" ? mark.line + 1 : 1;
    const reason = (error as { reason?: unknown }).reason;
    return fail(
      `the front matter is not valid YAML: ${typeof reason === "string" ? reason : String(error)}`,
      line,
    );
  }
  const data: unknown = parsed.data;
  if (typeof data !== "object" || data === null || Array.isArray(data))
    fail("the front matter must be a mapping of keys (name:, description:)", 2);
  const fields = data as Record<string, unknown>;

  const name = fields.name;
  if (name === undefined)
    fail("missing: every skill needs name: (its directory's name)", lineOf("name"), "name");
  if (typeof name !== "string" || name.length > SKILL_NAME_MAX || !SKILL_NAME_PATTERN.test(name)) {
    fail(
      `expected lowercase letters, digits and single hyphens, at most ${SKILL_NAME_MAX} characters (code-review), got ${describe(name)}`,
      lineOf("name"),
      "name",
    );
  }
  if (name !== dirName) {
    fail(
      `"${name as string}" is not the name of its directory "${dirName}"; a skill's name is its directory's name`,
      lineOf("name"),
      "name",
    );
  }

  const rawDescription = fields.description;
  if (rawDescription === undefined) {
    fail(
      "missing: every skill needs description: (what it does and when to use it; it is listed in the system prompt)",
      lineOf("description"),
      "description",
    );
  }
  const description = typeof rawDescription === "string" ? rawDescription.replace(/\s+/g, " ").trim() : "";
  if (description === "") {
    fail(
      `expected a non-empty string, got ${describe(rawDescription)}`,
      lineOf("description"),
      "description",
    );
  }
  if (description.length > SKILL_DESCRIPTION_MAX) {
    fail(
      `is ${description.length} characters long, over the limit of ${SKILL_DESCRIPTION_MAX}; say in a sentence or two what the skill does and when to use it`,
      lineOf("description"),
      "description",
    );
  }

  return {
    name: name as string,
    description,
    allowedTools: allowedToolsOf(fields["allowed-tools"], (problem) =>
      fail(problem, lineOf("allowed-tools"), "allowed-tools"),
    ),
    body: parsed.content,
  };
}

/** `allowed-tools`: a list of strings, or one string of entries separated by commas or spaces. */
function allowedToolsOf(value: unknown, fail: (problem: string) => never): string[] {
  if (value === undefined || value === null) return [];
  const entries =
    typeof value === "string"
      ? (value.match(/[^\s,(]+(?:\([^)]*\))?/g) ?? [])
      : Array.isArray(value) && value.every((entry) => typeof entry === "string")
        ? value.map((entry: string) => entry.trim()).filter((entry) => entry !== "")
        : fail(
            `expected a list of tool names, or one string of them separated by commas, got ${describe(value)}`,
          );
  if (entries.length > ALLOWED_TOOLS_MAX)
    fail(`lists ${entries.length} tools, more than ${ALLOWED_TOOLS_MAX}`);
  const bad = entries.find((entry) => entry.length > 256 || /[\0\n\r]/.test(entry));
  if (bad !== undefined) fail(`"${bad.slice(0, 40)}" is not a tool name or a tool(pattern)`);
  return entries;
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : `${typeof value} ${String(value)}`;
}
