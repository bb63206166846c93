import type { Store, StorePackageOptions } from "@podkit/session-store";
import { PostgresStore } from "./postgres-store.js";

/**
 * Opens the PostgreSQL store at `options.url` (the `StorePackage` entry point an application
 * calls when a manifest says `[session] store = "postgres"`). No connection is made until the
 * first read or write; the tables are created and migrated then.
 */
export function openStore<TItem>(options: StorePackageOptions<TItem>): Store<TItem> {
  return new PostgresStore<TItem>(options);
}
