import type { PgDispatcher, PgDispatcherOptions } from "@podkit/dispatch-pg";
import type { LoadedManifest } from "@podkit/manifest";
import { PodkitCliError } from "../errors.js";

/** The schema the dispatcher keeps its queue in, unless `PODKIT_DISPATCH_SCHEMA` names another. */
export const DEFAULT_DISPATCH_SCHEMA = "podkit_dispatch";

/**
 * The dispatcher on the database of the manifest's PostgreSQL session store (its own schema
 * there): dispatched runs need sessions every machine can open, so a filesystem store is an error
 * that says what to set. The caller closes it.
 */
export async function openDispatcher(
  loaded: LoadedManifest,
  env: Readonly<Record<string, string | undefined>>,
  options: Omit<PgDispatcherOptions, "url" | "schema"> = {},
): Promise<PgDispatcher> {
  const session = loaded.manifest.session;
  if (session.store !== "postgres") {
    throw new PodkitCliError(
      `dispatched runs need sessions every machine can open, but pod "${loaded.manifest.pod.name}" stores them on the filesystem`,
      {
        hint: 'set [session] store = "postgres" (and url_env, default PODKIT_DATABASE_URL) in the manifest; see docs/dispatch.md',
      },
    );
  }
  const url = env[session.url_env];
  if (url === undefined || url === "") {
    throw new PodkitCliError(`the environment variable ${session.url_env} is not set`, {
      hint: `export ${session.url_env}=postgres://user:password@host/db — the database of the session store, where the queue lives too`,
    });
  }
  const { PgDispatcher } = await import("@podkit/dispatch-pg");
  return new PgDispatcher({ url, schema: env.PODKIT_DISPATCH_SCHEMA || DEFAULT_DISPATCH_SCHEMA, ...options });
}
