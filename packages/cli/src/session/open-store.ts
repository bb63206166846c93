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
  // The import is the CLI's own, so it resolves from the CLI's dependencies (pnpm does not hoist
  // it next to @podkit/pod).
  return openSessionStore(loaded, { env, importPostgresStore: () => import("@podkit/store-postgres") });
}
