import type { PodOptions, PodWarning } from "@podkit/pod";
import type { CommandContext } from "../commands/command.js";
import { CLI_PACKAGES } from "./open-store.js";

/**
 * The options of every pod the CLI builds — `run`/`resume`, `serve`, `worker`, `submit` — made in
 * this one place: the CLI's environment, warnings on stderr (`warning: …`), and the optional
 * packages the CLI ships (`@podkit/store-postgres`, `@podkit/memory`), so `[memory]` attaches
 * once, by the pod, in any workspace (a globally installed CLI finds its own copy). `extra`
 * adds what only one command sets (the store it opened, an approver, `autoApprove`, telemetry).
 */
export function cliPodOptions(ctx: CommandContext, extra: PodOptions = {}): PodOptions {
  return {
    env: ctx.io.env,
    onWarning: (warning: PodWarning) => ctx.io.stderr.write(`warning: ${warning.message}\n`),
    packages: CLI_PACKAGES,
    ...extra,
  };
}
