import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { invocationOf, Pod, type PodOptions, recordedInvocation } from "@podkit/pod";
import type { PodSource } from "@podkit/serve";
import { NotFoundError, type Store } from "@podkit/session-store";
import type { CommandContext } from "../commands/command.js";
import { cliPodOptions } from "./pod-options.js";
import { describeInvocation, manifestForSession } from "./session-manifest.js";

/**
 * The pods `podkit serve` runs: the manifest's (memory attached by the pod when `[memory]` is on).
 * A server has no one at a terminal to ask: calls that need approval (bash, confirmed writes) stay
 * pending in the log and the run ends `awaiting_approval`, answered through
 * `POST /sessions/:id/approvals/:call` (or `podkit approve`); `--yes` runs them without asking.
 */
export function servedPods(
  loaded: LoadedManifest,
  ctx: CommandContext,
  options: { yes: boolean },
): PodSource {
  const podOptions = (store: Store<Item>): PodOptions =>
    cliPodOptions(ctx, { store, autoApprove: options.yes });
  // A session started with `-m`/`--set` (`podkit run`) is restored with what it recorded, as
  // `podkit resume` does (one rule: session-manifest.ts); each distinct record is loaded once.
  const own = describeInvocation(invocationOf(loaded));
  const manifests = new Map<string, Promise<LoadedManifest>>();
  const manifestOf = async (store: Store<Item>, sessionId: string): Promise<LoadedManifest> => {
    const recorded = await recordedInvocation(store, sessionId).catch((error: unknown) => {
      if (NotFoundError.isInstance(error)) return undefined; // the restore says so
      throw error;
    });
    const key = describeInvocation(recorded);
    if (recorded === undefined || key === own) return loaded;
    let found = manifests.get(key);
    if (found === undefined) {
      found = manifestForSession(recorded, loaded.workspace, ctx.env, (text) =>
        ctx.io.stderr.write(`warning: ${text}\n`),
      );
      manifests.set(key, found);
      found.catch(() => manifests.delete(key));
    }
    return found;
  };
  return {
    create: (store) => Pod.fromManifest(loaded, podOptions(store)),
    restore: async (store, sessionId) =>
      Pod.restore(await manifestOf(store, sessionId), sessionId, podOptions(store)),
  };
}
