import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { Pod, type PodOptions } from "@podkit/pod";
import type { PodSource } from "@podkit/serve";
import type { Store } from "@podkit/session-store";
import type { CommandContext } from "../commands/command.js";
import { CLI_PACKAGES } from "./open-store.js";

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
  const podOptions = (store: Store<Item>): PodOptions => ({
    store,
    env: ctx.io.env,
    onWarning: (warning) => ctx.io.stderr.write(`warning: ${warning.message}\n`),
    // With [memory], the pod attaches the memory of the CLI's own @podkit/memory.
    packages: CLI_PACKAGES,
    autoApprove: options.yes,
  });
  return {
    create: (store) => Pod.fromManifest(loaded, podOptions(store)),
    restore: (store, sessionId) => Pod.restore(loaded, sessionId, podOptions(store)),
  };
}
