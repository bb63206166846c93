export type { ErrorKind } from "@podkit/session-store";
export {
  PostgresQueryError,
  PostgresStoreError,
  PostgresStoreUsageError,
  SchemaTooNewError,
  SchemaUpgradeBlockedError,
} from "./errors.js";
export type { MigrateOptions, MigrationResult } from "./migrations.js";
export { migrate, SCHEMA_VERSION } from "./migrations.js";
export { openStore } from "./open-store.js";
export type { PostgresStoreOptions } from "./postgres-store.js";
export { PostgresStore } from "./postgres-store.js";
