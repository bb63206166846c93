import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { openSessionStore } from "@podkit/pod";
import type { Store } from "@podkit/session-store";

/**
 * The optional packages the CLI ships (its own dependencies), passed to the pod: a globally
 * installed podkit opens PostgreSQL and attaches memory for projects that do not install them.
 */
export const CLI_PACKAGES = {
  "@podkit/store-postgres": () => import("@podkit/store-postgres"),
  "@podkit/memory": () => import("@podkit/memory"),
} as const;

/**
 * The session store the manifest's `[session]` table selects (the filesystem under
 * `<workspace>/.podkit/sessions` by default, or PostgreSQL), with the URL variable read from the
 * CLI's environment. The caller closes it.
 */
export function openStore(
  loaded: LoadedManifest,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Store<Item>> {
  return openSessionStore(loaded, { env, storePackages: CLI_PACKAGES });
}
