import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { Pod, type PodOptions } from "@podkit/pod";
import type { PodSource } from "@podkit/serve";
import type { Store } from "@podkit/session-store";
import type { CommandContext } from "../commands/command.js";
import { cliPodOptions } from "./pod-options.js";

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
  return {
    create: (store) => Pod.fromManifest(loaded, podOptions(store)),
    restore: (store, sessionId) => Pod.restore(loaded, sessionId, podOptions(store)),
  };
}
