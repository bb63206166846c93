import { join } from "node:path";
import { type Item, ItemSchema, RequestConfigSchema } from "@podkit/llm-worker";
import type { LoadedManifest } from "@podkit/manifest";
import { FsStore, type Store, type StorePackage } from "@podkit/session-store";
import { importResolved, resolveOptionalPackage, whereSet } from "./optional-package.js";
import {
  SessionStorePackageInvalidError,
  SessionStorePackageMissingError,
  SessionStoreUrlUnsetError,
} from "./store-selection-errors.js";

/** The package of the PostgreSQL store (`[session] store = "postgres"`). */
export const POSTGRES_STORE_PACKAGE = "@podkit/store-postgres";

/**
 * What a log read back is validated with: the worker's own item and request-config schemas, so a
 * malformed or hand-edited log is a `CorruptEntryError` naming its file and line, never a crash
 * inside the worker. A config key the worker does not know is let through (logs written by other
 * versions carry some, e.g. `model`; the worker reads only its own keys), every key it knows must
 * have its type.
 */
const LOG_SCHEMAS = { itemSchema: ItemSchema, configSchema: RequestConfigSchema.loose() };

/**
 * How long the filesystem store keeps a segment's append lock after the pod's last append. The
 * store's 10 ms lapses between two back-to-back turns (a scripted session, a dispatch queue, a
 * fast local model), so every turn paid for creating and removing the lock file and re-checking
 * the segment. Another process that wants the session while this pod is idle waits at most this
 * long (a writer that keeps appending hands the lock over within a few ms, as before).
 */
const POD_LOCK_LINGER_MS = 50;

/** Options of `openSessionStore`. */
export interface OpenSessionStoreOptions {
  /** Where the variable `[session] url_env` names is read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Store packages the application ships, by package name, used instead of resolving them from
   * the manifest's directory: a globally installed CLI passes
   * `{ "@podkit/store-postgres": () => import("@podkit/store-postgres") }` for projects that do
   * not install the store themselves.
   */
  readonly storePackages?: Readonly<Record<string, () => Promise<unknown>>>;
}

/**
 * Opens the session store the manifest's `[session]` table selects: the filesystem store under
 * `<data dir>/sessions` (the default; `LoadedManifest.dataDir`: `<workspace>/.podkit` when it exists), or PostgreSQL at the URL held by the variable
 * `url_env` names. The store package is found the way tool packages are — resolved from the
 * directory of the manifest that selected it, then from the workspace — unless the application
 * passes it (`storePackages`); it is imported only when selected, so a pod on the filesystem
 * never loads the database driver. No connection is made here: the PostgreSQL store connects
 * (and migrates) on first use. The caller owns the store and closes it. Either store validates
 * what it reads with the worker's item and request-config schemas.
 *
 * Throws `SessionStoreUrlUnsetError` naming the variable when it is unset,
 * `SessionStorePackageMissingError` naming the package and where it was looked for when it is
 * not installed, and `SessionStorePackageInvalidError` when it does not export `openStore`.
 */
export async function openSessionStore(
  loaded: LoadedManifest,
  options: OpenSessionStoreOptions = {},
): Promise<Store<Item>> {
  const session = loaded.manifest.session;
  if (session.store === "fs") return openWorkspaceFsStore(loaded.dataDir);
  const env = options.env ?? process.env;
  const url = env[session.url_env];
  if (url === undefined || url.trim() === "") {
    throw new SessionStoreUrlUnsetError(
      `[session] store = "postgres" reads the database URL from $${session.url_env}${whereSet(loaded, "session.url_env")}, but ${session.url_env} is ${url === undefined ? "not set" : "empty"}`,
      {
        variable: session.url_env,
        hint: `export ${session.url_env}=postgres://<user>:<password>@<host>:5432/<database>, or name another variable with [session] url_env`,
      },
    );
  }
  const storePackage = await loadStorePackage(loaded, POSTGRES_STORE_PACKAGE, options.storePackages);
  return storePackage.openStore<Item>({ url, ...LOG_SCHEMAS });
}

/**
 * The filesystem store of a workspace whose data dir is `dataDir` (`LoadedManifest.dataDir`, or
 * `workspaceDataDir(workspace, env)` where there is no manifest): `<dataDir>/sessions`, with the
 * pod's lock lease and log schemas — the store the default `[session]` selects.
 */
export function openWorkspaceFsStore(dataDir: string): Store<Item> {
  return new FsStore<Item>({
    root: join(dataDir, "sessions"),
    lockLingerMs: POD_LOCK_LINGER_MS,
    ...LOG_SCHEMAS,
  });
}

/** The application's copy of `name`, or the one installed where the manifest is. */
async function loadStorePackage(
  loaded: LoadedManifest,
  name: string,
  provided: OpenSessionStoreOptions["storePackages"],
): Promise<StorePackage> {
  const provide = provided?.[name];
  const loadedFrom = provide === undefined ? resolveStorePackage(loaded, name) : undefined;
  const module = provide === undefined ? await importResolved(loadedFrom as string) : await provide();
  if (typeof (module as Partial<StorePackage> | null)?.openStore !== "function") {
    throw new SessionStorePackageInvalidError(
      `${name}${loadedFrom === undefined ? "" : ` (${loadedFrom})`} does not export openStore, so it cannot open the session store [session] selects`,
      {
        packageName: name,
        hint: `install a version of ${name} that matches @podkit/pod`,
      },
    );
  }
  return module as StorePackage;
}

/** Where `name` is installed for the manifest that selected the store (see `resolveOptionalPackage`). */
function resolveStorePackage(loaded: LoadedManifest, name: string): string {
  const found = resolveOptionalPackage(loaded, name, "session.store");
  if ("path" in found) return found.path;
  throw new SessionStorePackageMissingError(
    `[session] store = "postgres"${whereSet(loaded, "session.store")} needs the package ${name}, which is not installed where the manifest is; looked in ${found.searched.join(", ")}`,
    {
      packageName: name,
      hint: `install it in the workspace: cd ${loaded.workspace} && npm install ${name} (or pnpm add ${name})`,
      cause: found.cause,
    },
  );
}
