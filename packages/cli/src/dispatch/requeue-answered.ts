import { RUN_DOMAIN, RunEntrySchema } from "@podkit/dispatch";
import type { LoadedManifest } from "@podkit/manifest";
import type { SessionState } from "@podkit/session-store";
import { openDispatcher } from "./open-dispatcher.js";

/**
 * After the last pending approval of a session is answered: when the session's latest dispatched
 * run stopped awaiting approval, queue it again (`Dispatcher.requeue`) so a worker continues it
 * under the same id. Returns that run's id, or undefined for a session no dispatcher ran.
 */
export async function requeueAnsweredRun(
  loaded: LoadedManifest,
  env: Readonly<Record<string, string | undefined>>,
  state: Pick<SessionState, "extensions">,
): Promise<string | undefined> {
  const latest = RunEntrySchema.safeParse(state.extensions.get(RUN_DOMAIN));
  if (!latest.success || latest.data.event !== "ended" || latest.data.state !== "awaiting_approval") {
    return undefined;
  }
  const dispatcher = await openDispatcher(loaded, env);
  try {
    await dispatcher.requeue(latest.data.run_id);
    return latest.data.run_id;
  } finally {
    await dispatcher.close();
  }
}
