import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { Pod, type PodOptions } from "@podkit/pod";
import type { PodSource } from "@podkit/serve";
import type { Store } from "@podkit/session-store";
import type { CommandContext } from "../commands/command.js";
import { approvalHook, toolsNeedingApproval } from "./approvals.js";
import { CLI_PACKAGES } from "./open-store.js";

/**
 * The pods `podkit serve` runs: the manifest's (memory attached by the pod when `[memory]` is on), and calls that
 * need approval (bash, confirmed writes) denied with a reason unless `--yes` — a server has no one
 * at a terminal to ask. Durable approvals (`approval_requested` entries answered through the API)
 * will replace the denial here.
 */
export function servedPods(
  loaded: LoadedManifest,
  ctx: CommandContext,
  options: { yes: boolean },
): PodSource {
  const podOptions = (store: Store<Item>): PodOptions => ({
    store,
    env: ctx.io.env,
    onWarning: (warning) => ctx.io.stderr.write(`warning: ${warning.message}\n`),
    // With [memory], the pod attaches the memory of the CLI's own @podkit/memory.
    packages: CLI_PACKAGES,
  });
  const ready = (pod: Pod) => {
    pod.addHooks(approvalHook({ names: toolsNeedingApproval(loaded), yes: options.yes }));
    return pod;
  };
  return {
    create: async (store) => ready(await Pod.fromManifest(loaded, podOptions(store))),
    restore: async (store, sessionId) => ready(await Pod.restore(loaded, sessionId, podOptions(store))),
  };
}
