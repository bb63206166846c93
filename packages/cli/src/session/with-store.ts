import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import type { Store } from "@podkit/session-store";
import type { CommandContext, CommandInput } from "../commands/command.js";
import { loadPodManifest } from "./load-pod-manifest.js";
import { openStore } from "./open-store.js";

/** Runs `use` with the store the command's manifest selects, closed afterwards whatever happens. */
export async function withStore<T>(
  input: CommandInput,
  ctx: CommandContext,
  use: (store: Store<Item>, loaded: LoadedManifest) => Promise<T>,
): Promise<T> {
  const loaded = await loadPodManifest(input, ctx);
  const store = await openStore(loaded, ctx.io.env);
  try {
    return await use(store, loaded);
  } finally {
    await store.close();
  }
}
