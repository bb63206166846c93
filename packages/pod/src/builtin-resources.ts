import { fileURLToPath } from "node:url";

/**
 * `resources/prompts/` shipped inside this package. The build copies the repository's
 * `resources/prompts` next to `dist/`, so the same relative URL works from `dist/*.js` in a
 * published install and from `src/*.ts` under vitest in the repository.
 */
export function builtinPromptsDir(): string {
  return fileURLToPath(new URL("../resources/prompts/", import.meta.url)).replace(/[\\/]$/, "");
}
