import { z } from "zod";

/**
 * The `extension` domain of the skills the model was told about: the listing's mode and each
 * skill's name and digest as the system prompt rendered them at session start, updated by every
 * change notification, and carried into each compacted segment. A restored pod offers the `skill`
 * tool in this mode (its definition is part of the cached prefix) and compares the disk with it.
 * Additive in log format v3 (docs/skills.md, "In the session log").
 */
export const SKILLS_KNOWN_DOMAIN = "skills.known";

/**
 * The `extension` domain of each `skill` call that loaded a skill or one of its files, committed
 * before the call's result: what was loaded (the SKILL.md's digest, its path, its `allowed-tools`)
 * and the skills active in the segment since — whose bodies are in the context, and whose
 * `allowed-tools` may pre-approve tools. A compacted segment starts with one carrying the active
 * skills only (those it re-injected or kept). Additive in log format v3.
 */
export const SKILLS_LOADED_DOMAIN = "skills.loaded";

export const SKILL_MODES = ["list", "search"] as const;
/** `list`: the system prompt lists every skill; `search`: it says how many, and `skill` takes a query. */
export type SkillMode = (typeof SKILL_MODES)[number];

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const skillsKnownSchema = z.object({
  mode: z.enum(SKILL_MODES),
  skills: z.array(z.object({ name: z.string(), digest })),
});
/** A `skills.known` payload. */
export type SkillsKnown = z.infer<typeof skillsKnownSchema>;

const activeSkillSchema = z.object({
  name: z.string(),
  digest,
  /** `allowed-tools` of the loaded version, as written. */
  allowed_tools: z.array(z.string()),
  /** The pod could write its SKILL.md when it was loaded: its `allowed-tools` then pre-approve nothing. */
  writable: z.boolean(),
});
/** A skill whose body is in the segment's context. */
export type ActiveSkill = z.infer<typeof activeSkillSchema>;

export const skillsLoadedSchema = z.object({
  call_id: z.string().optional(),
  name: z.string().optional(),
  /** The SKILL.md's digest (`sha256:` of its bytes) when it was read for this call. */
  digest: digest.optional(),
  /** The SKILL.md, relative to the workspace. */
  path: z.string().optional(),
  allowed_tools: z.array(z.string()).optional(),
  /** A bundled file this call returned (relative to the skill's directory), and its digest. */
  file: z.string().optional(),
  file_digest: digest.optional(),
  active: z.array(activeSkillSchema),
});
/** A `skills.loaded` payload. */
export type SkillsLoaded = z.infer<typeof skillsLoadedSchema>;

/**
 * The payload of `domain` in a segment's extension state, when it has the shape `schema` says.
 * The log is untrusted: a payload of another shape counts as none.
 */
export function recordOf<T>(
  extensions: ReadonlyMap<string, unknown>,
  domain: string,
  schema: z.ZodType<T>,
): T | undefined {
  const parsed = schema.safeParse(extensions.get(domain));
  return parsed.success ? parsed.data : undefined;
}
