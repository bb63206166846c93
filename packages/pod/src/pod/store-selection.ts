import type { Item } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { FsStore, type Store, sessionsRoot } from "@podkit/session-store";
import { SessionStorePackageMissingError, SessionStoreUrlUnsetError } from "./store-selection-errors.js";

/** The package of the PostgreSQL store; an optional peer of `@podkit/pod`. */
export const POSTGRES_STORE_PACKAGE = "@podkit/store-postgres";

/** Options of `openSessionStore`. */
export interface OpenSessionStoreOptions {
  /** Where the variable `[session] url_env` names is read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Imports `@podkit/store-postgres` when it is selected; default a dynamic import from
   * `@podkit/pod`. An application that depends on the package itself (the CLI does) passes
   * `() => import("@podkit/store-postgres")`, so the import resolves from its own dependencies.
   */
  readonly importPostgresStore?: () => Promise<PostgresStoreModule>;
}

/** What `openSessionStore` needs of `@podkit/store-postgres`. */
export interface PostgresStoreModule {
  readonly PostgresStore: new (options: { url: string }) => Store<Item>;
}

/**
 * Opens the session store the manifest's `[session]` table selects: the filesystem store under
 * `<workspace>/.podkit/sessions` (the default), or PostgreSQL at the URL held by the variable
 * `url_env` names. `@podkit/store-postgres` is imported only when selected, so a pod on the
 * filesystem never loads the database driver. No connection is made here: the PostgreSQL store
 * connects (and migrates) on first use. The caller owns the store and closes it.
 *
 * Throws `SessionStoreUrlUnsetError` naming the variable when it is unset, and
 * `SessionStorePackageMissingError` naming the package when it is not installed.
 */
export async function openSessionStore(
  loaded: LoadedManifest,
  options: OpenSessionStoreOptions = {},
): Promise<Store<Item>> {
  const session = loaded.manifest.session;
  if (session.store === "fs") return new FsStore<Item>({ root: sessionsRoot(loaded.workspace) });
  const env = options.env ?? process.env;
  const url = env[session.url_env];
  if (url === undefined || url.trim() === "") {
    throw new SessionStoreUrlUnsetError(
      `[session] store = "postgres" reads the database URL from $${session.url_env}${whereSet(loaded)}, but ${session.url_env} is ${url === undefined ? "not set" : "empty"}`,
      {
        variable: session.url_env,
        hint: `export ${session.url_env}=postgres://<user>:<password>@<host>:5432/<database>, or name another variable with [session] url_env`,
      },
    );
  }
  const { PostgresStore } = await importPostgresStore(options.importPostgresStore);
  return new PostgresStore({ url });
}

/** ` (url_env set in <file>:<line>)`, or nothing when the name is the builtin default. */
function whereSet(loaded: LoadedManifest): string {
  const source = loaded.provenance.get("session.url_env");
  const file = source?.layer.file;
  if (file === undefined) return "";
  return ` (url_env set in ${file}${source?.line === undefined ? "" : `:${source.line}`})`;
}

async function importPostgresStore(
  importer: (() => Promise<PostgresStoreModule>) | undefined,
): Promise<PostgresStoreModule> {
  try {
    return importer === undefined ? await import("@podkit/store-postgres") : await importer();
  } catch (error) {
    // Only the package itself missing is "not installed"; a missing dependency of it (or any
    // other failure while loading it) is a broken installation and keeps its own message.
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : "";
    if (code === "ERR_MODULE_NOT_FOUND" && message.includes(`'${POSTGRES_STORE_PACKAGE}'`)) {
      throw new SessionStorePackageMissingError(
        `[session] store = "postgres" needs the package ${POSTGRES_STORE_PACKAGE}, which is not installed where @podkit/pod can import it`,
        {
          packageName: POSTGRES_STORE_PACKAGE,
          hint: `install it next to @podkit/pod: npm install ${POSTGRES_STORE_PACKAGE} (or pnpm add ${POSTGRES_STORE_PACKAGE})`,
          cause: error,
        },
      );
    }
    throw error;
  }
}
