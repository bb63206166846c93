/** The prefixes of prompt references ($podkit/…, $user/…, $workspace/…): builtin resources, the user config dir, the workspace. */
export const PROMPT_PREFIXES = ["podkit", "user", "workspace"] as const;
export type PromptPrefix = (typeof PROMPT_PREFIXES)[number];

/** How a prompt reference is spelled, or why it is not one. */
export type PromptRefSpelling =
  /** `$prefix/a/b`: absolute within the prefix. */
  | { readonly kind: "prefixed"; readonly prefix: PromptPrefix; readonly segments: readonly string[] }
  /** `a/b`: resolved next to the file that names it. */
  | { readonly kind: "relative"; readonly segments: readonly string[] }
  | { readonly kind: "unknown_prefix"; readonly prefix: string; readonly problem: string }
  | { readonly kind: "invalid"; readonly problem: string };

const PREFIXED = /^\$([A-Za-z][A-Za-z0-9_-]*)\/(.*)$/s;

/**
 * The spelling rules of a prompt reference, the one copy of them: the manifest checks a
 * `prompt_pack` reference with it when the manifest loads, the pod's prompt loader every
 * reference it resolves. Plain `/`-separated names, never `.`, `..`, an empty segment, a
 * backslash, a NUL byte or an absolute path; `$` starts one of the known prefixes.
 */
export function spellPromptRef(raw: string): PromptRefSpelling {
  const invalid = (problem: string) => ({ kind: "invalid", problem }) as const;
  if (raw.includes("\u0000")) return invalid("it contains a NUL byte");
  if (raw.includes("\\")) return invalid("it contains a backslash (use `/`)");
  let spelled: PromptRefSpelling;
  if (raw.startsWith("$")) {
    const match = PREFIXED.exec(raw);
    if (!match) return invalid("expected `$prefix/path`");
    const prefix = match[1] as string;
    if (!(PROMPT_PREFIXES as readonly string[]).includes(prefix)) {
      return {
        kind: "unknown_prefix",
        prefix,
        problem: `unknown prompt prefix $${prefix}; known prefixes: ${PROMPT_PREFIXES.map((p) => `$${p}`).join(", ")}`,
      };
    }
    spelled = { kind: "prefixed", prefix: prefix as PromptPrefix, segments: (match[2] as string).split("/") };
  } else {
    if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) return invalid("absolute paths are not allowed");
    spelled = { kind: "relative", segments: raw.split("/") };
  }
  for (const segment of spelled.segments) {
    if (segment === "") return invalid("empty path segment");
    if (segment === "." || segment === "..") return invalid(`'${segment}' segments are not allowed`);
  }
  return spelled;
}
