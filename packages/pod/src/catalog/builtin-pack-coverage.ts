import type { BuiltinPromptKey } from "./builtin-keys.generated.js";
import type { PodPrompt } from "./pod-prompt.js";

/**
 * Build-time coverage check of the builtin pack. `builtin-keys.generated.ts` is written
 * from `resources/prompts/internal.toml` by `scripts/gen-prompt-keys.mjs` at the start of every
 * build; if the two key sets differ in either direction, one of these constants gets a type
 * that names the offending keys and `tsc -b` fails.
 */
type Report<Problem extends string, Keys> = [Keys] extends [never] ? true : `${Problem}: ${Keys & string}`;

export const internalTomlHasEveryPodPrompt: Report<
  "resources/prompts/internal.toml lacks the PodPrompt key",
  Exclude<PodPrompt, BuiltinPromptKey>
> = true;

export const internalTomlHasOnlyPodPrompts: Report<
  "resources/prompts/internal.toml has a key that PodPrompt lacks",
  Exclude<BuiltinPromptKey, PodPrompt>
> = true;
