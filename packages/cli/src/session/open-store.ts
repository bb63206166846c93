import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { openSessionStore } from "@podkit/pod";
import type { Store } from "@podkit/session-store";

/**
 * The session store the manifest's `[session]` table selects (the filesystem under
 * `<workspace>/.podkit/sessions` by default, or PostgreSQL), with the URL variable read from the
 * CLI's environment. The caller closes it.
 */
export function openStore(
  loaded: LoadedManifest,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Store<Item>> {
  // The CLI ships its own @podkit/store-postgres (a dependency): a globally installed podkit opens
  // PostgreSQL for projects that do not install the store package themselves.
  return openSessionStore(loaded, {
    env,
    storePackages: { "@podkit/store-postgres": () => import("@podkit/store-postgres") },
  });
}
