import { type ErrorKind, SessionStoreError } from "@podkit/session-store";

const BASE_MARKER = Symbol.for("podkit.store-postgres.error");

function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by `@podkit/store-postgres`. It is also a `SessionStoreError`
 * (a store's failures are session-store failures to its callers); both `isInstance` checks use
 * `Symbol.for` markers, so they work across duplicated copies of either package.
 */
export class PostgresStoreError extends SessionStoreError {
  readonly [BASE_MARKER] = true;
  /** The database is what fails here, unless a class says otherwise (docs/errors.md, "Kinds"). */
  override readonly errorKind: ErrorKind = "transient";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PostgresStoreError";
  }

  static override isInstance(value: unknown): value is PostgresStoreError {
    return hasMarker(value, BASE_MARKER);
  }
}

const SCHEMA_MARKER = Symbol.for("podkit.store-postgres.error.schema-too-new");

/** The database schema was migrated by a newer @podkit/store-postgres than this one. */
export class SchemaTooNewError extends PostgresStoreError {
  readonly [SCHEMA_MARKER] = true;
  override readonly errorKind: ErrorKind = "unsupported";
  readonly schema: string;
  readonly databaseVersion: number;
  readonly supportedVersion: number;

  constructor(args: { schema: string; databaseVersion: number; supportedVersion: number }) {
    super(
      `PostgreSQL schema "${args.schema}" is at session-store schema version ${args.databaseVersion}, ` +
        `but this @podkit/store-postgres knows versions up to ${args.supportedVersion}; ` +
        "upgrade podkit on this machine (a newer podkit migrated the database). Nothing was written.",
    );
    this.name = "SchemaTooNewError";
    this.schema = args.schema;
    this.databaseVersion = args.databaseVersion;
    this.supportedVersion = args.supportedVersion;
  }

  static override isInstance(value: unknown): value is SchemaTooNewError {
    return hasMarker(value, SCHEMA_MARKER);
  }
}

const UPGRADE_MARKER = Symbol.for("podkit.store-postgres.error.schema-upgrade-blocked");

/**
 * A migration found data it cannot carry over and changed nothing: version 3 drops each
 * segment's stored entry count, and a segment whose count disagrees with the entries it holds
 * (an entry deleted by hand, a damaged restore) would lose the only record of what is missing.
 */
export class SchemaUpgradeBlockedError extends PostgresStoreError {
  readonly [UPGRADE_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  readonly schema: string;
  readonly version: number;
  readonly segments: readonly { segmentId: string; counted: number; held: number }[];

  constructor(args: {
    schema: string;
    version: number;
    segments: readonly { segmentId: string; counted: number; held: number }[];
  }) {
    const listed = args.segments
      .slice(0, 10)
      .map((segment) => `${segment.segmentId} (counts ${segment.counted}, holds ${segment.held})`)
      .join(", ");
    const more = args.segments.length > 10 ? ` and ${args.segments.length - 10} more` : "";
    super(
      `cannot migrate schema ${args.schema} to version ${args.version}: the entry count of ` +
        `${args.segments.length === 1 ? "segment" : "segments"} ${listed}${more} disagrees with ` +
        "the entries stored (or they are not numbered 0, 1, 2, …). Restore those segments from a backup, " +
        "or set podkit_segments.entry_count to the entries they hold, then migrate again. Nothing was changed.",
    );
    this.name = "SchemaUpgradeBlockedError";
    this.schema = args.schema;
    this.version = args.version;
    this.segments = args.segments;
  }

  static override isInstance(value: unknown): value is SchemaUpgradeBlockedError {
    return hasMarker(value, UPGRADE_MARKER);
  }
}

const QUERY_MARKER = Symbol.for("podkit.store-postgres.error.query-failed");

/**
 * A statement failed in the database or the connection to it broke. Every write is one
 * transaction, so a failed write left nothing partial; when the connection broke during the
 * commit itself the write may have committed, which the next conditional append detects as drift.
 */
export class PostgresQueryError extends PostgresStoreError {
  readonly [QUERY_MARKER] = true;
  override readonly errorKind: ErrorKind = "transient";
  readonly operation: string;
  /** The SQLSTATE code when the server sent one (e.g. `57P01` for a terminated connection). */
  readonly code: string | undefined;

  constructor(args: { operation: string; where: string; cause: unknown }) {
    const cause = args.cause as { message?: string; code?: unknown };
    const code = typeof cause?.code === "string" ? cause.code : undefined;
    super(
      `${args.operation} on ${args.where} failed: ${cause?.message ?? String(args.cause)}` +
        `${code === undefined ? "" : ` (SQLSTATE ${code})`}. The transaction did not commit partially; ` +
        "check that the database is reachable and retry.",
      { cause: args.cause },
    );
    this.name = "PostgresQueryError";
    this.operation = args.operation;
    this.code = code;
  }

  static override isInstance(value: unknown): value is PostgresQueryError {
    return hasMarker(value, QUERY_MARKER);
  }
}

const USAGE_MARKER = Symbol.for("podkit.store-postgres.error.usage");

/** Options that cannot work: a malformed schema name, a database that is not UTF-8. */
export class PostgresStoreUsageError extends PostgresStoreError {
  readonly [USAGE_MARKER] = true;
  override readonly errorKind: ErrorKind = "usage";

  constructor(message: string) {
    super(message);
    this.name = "PostgresStoreUsageError";
  }

  static override isInstance(value: unknown): value is PostgresStoreUsageError {
    return hasMarker(value, USAGE_MARKER);
  }
}
