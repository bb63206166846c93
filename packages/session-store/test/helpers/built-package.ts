import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Path of a child-process helper script; throws with a hint when the package is not built. */
export function childScript(name: string): string {
  if (!existsSync(join(packageDir, "dist", "index.js"))) {
    throw new Error(
      "packages/session-store/dist is missing: run `pnpm --filter @podkit/session-store build` first",
    );
  }
  return join(packageDir, "test", "helpers", name);
}
