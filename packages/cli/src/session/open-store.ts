import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { FsStore, type Store, sessionsRoot } from "@podkit/session-store";

/**
 * The session store of a manifest's workspace: the filesystem store under
 * `<workspace>/.podkit/sessions` (the embedded default).
 */
export async function openStore(
  loaded: LoadedManifest,
  _env: Readonly<Record<string, string | undefined>>,
): Promise<Store<Item>> {
  return new FsStore({ root: sessionsRoot(loaded.workspace) }) as unknown as Store<Item>;
}
