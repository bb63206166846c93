import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import type { CommandContext, CommandInput } from "../commands/command.js";
import { loadManifestIfAny, openCommandStore } from "./session-manifest.js";

/**
 * Runs `use` with the store the command's manifest selects — or, with no manifest at all, the
 * workspace's filesystem store (`loaded` undefined) — closed afterwards whatever happens.
 */
export async function withStore<T>(
  input: CommandInput,
  ctx: CommandContext,
  use: (store: Store<Item>, loaded: LoadedManifest | undefined) => Promise<T>,
): Promise<T> {
  const loaded = await loadManifestIfAny(input, ctx);
  const store = await openCommandStore(loaded, ctx);
  try {
    return await use(store, loaded);
  } finally {
    await store.close();
  }
}
