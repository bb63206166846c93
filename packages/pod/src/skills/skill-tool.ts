import { basename, dirname, relative, sep } from "node:path";
import type { Tool, ToolOutput } from "@podkit/llm-worker";
import type { Scope } from "@podkit/manifest";
import { z } from "zod";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { bundledFiles, bundledPathProblem, readContained, resolveInside } from "./skill-paths.js";
import type { SkillMode } from "./skill-records.js";
import type { SkillEntry, SkillScan } from "./skill-scan.js";
import { skillDigest } from "./skill-scan.js";
import { searchSkills } from "./skill-search.js";

/** The tool's name: what the listing and its description tell the model to call. */
export const SKILL_TOOL_NAME = "skill";

/** What one `skill` call loaded, for its `skills.loaded` entry. */
export interface SkillLoad {
  readonly skill: SkillEntry;
  /** A bundled file, relative to the skill's directory, and its digest; undefined for the body. */
  readonly file?: { readonly path: string; readonly digest: string };
}

/** What the tool needs of the pod. */
export interface SkillToolContext {
  readonly mode: SkillMode;
  readonly catalog: PromptCatalog;
  /** The workspace, canonical (the skill's directory is shown relative to it). */
  readonly workspace: string;
  readonly scope: Scope;
  /** The skills on disk now: the tool always reads the current files (the log keeps what it read). */
  scan(): Promise<SkillScan>;
  /** Remembers what call `callId` loaded; the pod logs it before the call's result. */
  loaded(callId: string, load: SkillLoad): void;
}

const listArguments = z.object({ name: z.string(), file: z.string().optional() });
const searchArguments = z.object({
  query: z.string().optional(),
  name: z.string().optional(),
  file: z.string().optional(),
});

/**
 * `skill(name)`: the skill's body, wrapped by the catalog's `skill_loaded` with its directory and
 * bundled files, as the result's `summary` — which prune never drops, so the instructions stay in
 * the context; `skill(name, file)`: a bundled file as `content`. In search mode `skill(query)`
 * finds skills. A file is read only inside its skill's directory (no `..`, no absolute path, no
 * link out) and never when a scope deny rule covers it. Reading changes nothing: `readOnly`.
 */
export function skillTool(context: SkillToolContext): Tool {
  const { catalog, mode } = context;
  const refused = (summary: string): ToolOutput => ({ summary, is_error: true });
  return {
    name: SKILL_TOOL_NAME,
    description: catalog.render("skill_tool_description", { mode }),
    inputSchema: mode === "search" ? searchArguments : listArguments,
    readOnly: true,
    async execute(args: z.infer<typeof searchArguments>, { callId }): Promise<ToolOutput> {
      const { name, file, query } = args;
      const scan = await context.scan();
      if (query !== undefined && name === undefined && file === undefined) {
        const found = searchSkills(query, scan.skills.values());
        return { summary: catalog.render("skill_search_results", { query, ...found }) };
      }
      if (name === undefined || query !== undefined)
        return refused(catalog.render("skill_refused_arguments", { mode }));
      const skill = scan.skills.get(name);
      if (skill === undefined) {
        const broken = scan.problems.find((problem) => basename(dirname(problem.file)) === name);
        return refused(
          broken === undefined
            ? catalog.render("skill_refused_unknown", { name, mode })
            : catalog.render("skill_refused_invalid", { name, problem: broken.message }),
        );
      }
      if (file === undefined) {
        const bundled = await bundledFiles(skill.dir);
        context.loaded(callId, { skill });
        const summary = catalog.render("skill_loaded", {
          name,
          directory: workspacePath(context.workspace, skill.dir),
          body: skill.body.replace(/^\n+/, "").trimEnd(),
          files: bundled.files,
          files_omitted: bundled.omitted,
        });
        return { summary };
      }
      const read = await readBundled(skill, file, context.scope);
      if (!read.ok)
        return refused(catalog.render("skill_refused_file", { name, file, problem: read.problem }));
      context.loaded(callId, { skill, file: { path: file, digest: skillDigest(read.bytes) } });
      return {
        summary: catalog.render("skill_file_loaded", { name, file, bytes: read.bytes.length }),
        content: read.text,
      };
    },
  };
}

/** A bundled file's text, or why it cannot be read. */
async function readBundled(
  skill: SkillEntry,
  file: string,
  scope: Scope,
): Promise<{ ok: true; bytes: Buffer; text: string } | { ok: false; problem: string }> {
  const problem = bundledPathProblem(file);
  if (problem !== undefined) return { ok: false, problem };
  const resolved = await resolveInside(skill.dir, file);
  if (!resolved.ok) return resolved;
  const checked = await scope.check(resolved.path, "read");
  if (!checked.ok && checked.reason === "denied-by-rule") return { ok: false, problem: checked.message };
  const read = await readContained(resolved.path);
  if (!read.ok) return read;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
    return { ok: true, bytes: read.bytes, text };
  } catch {
    return { ok: false, problem: "it is not UTF-8 text (run it, or inspect it, with bash)" };
  }
}

/** `path` relative to the workspace, with `/` (`.podkit/skills/pdf`); absolute when outside it. */
export function workspacePath(workspace: string, path: string): string {
  const inside = relative(workspace, path);
  return inside === "" || inside.startsWith("..") ? path : inside.split(sep).join("/");
}
