import pg from "pg";
import {
  PostgresQueryError,
  PostgresStoreUsageError,
  SchemaTooNewError,
  SchemaUpgradeBlockedError,
} from "./errors.js";

/**
 * The schema's versions, applied in order. Never edit a released migration: add the next one.
 * `s` is the quoted schema name. Entries are `text`, never `jsonb`: jsonb reorders keys and
 * drops duplicates, and a restore must give back byte-identical items (provider prompt caches
 * key on the exact bytes). No foreign key from entries to segments: entries are only ever
 * inserted by the statement that creates their segment row, or by an append that found the row
 * (and the entry before its own), so the check would only add a lookup and a row lock per
 * inserted entry (measured: a third of an append's server time).
 */
export const MIGRATIONS: readonly {
  version: number;
  /** Rows of segments the migration cannot carry over (`SchemaUpgradeBlockedError`), if any. */
  check?: (s: string) => string;
  up: (s: string) => string;
}[] = [
  {
    version: 1,
    up: (s) => `
      CREATE TABLE ${s}.podkit_segments (
        segment_id text PRIMARY KEY,
        session_id text NOT NULL,
        entry_count integer NOT NULL CHECK (entry_count >= 1),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX podkit_segments_by_session ON ${s}.podkit_segments (session_id, segment_id);
      CREATE TABLE ${s}.podkit_entries (
        segment_id text NOT NULL,
        seq integer NOT NULL CHECK (seq >= 0),
        body text NOT NULL,
        PRIMARY KEY (segment_id, seq)
      );`,
  },
  {
    // Every committed write to a segment (create, append, truncate) notifies channel
    // `podkit_append` with `<schema>/<session>/<segment>`, delivered at commit, so a server on any
    // machine streaming the session wakes at once (`PostgresStore.listenForAppends`). A trigger,
    // not a statement of the store, so writers of every version and every process notify alike.
    version: 2,
    up: (s) => `
      CREATE FUNCTION ${s}.podkit_notify_append() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('${APPEND_CHANNEL}', TG_TABLE_SCHEMA || '/' || NEW.session_id || '/' || NEW.segment_id);
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER podkit_segments_notify_append
        AFTER INSERT OR UPDATE OF entry_count ON ${s}.podkit_segments
        FOR EACH ROW EXECUTE FUNCTION ${s}.podkit_notify_append();`,
  },
  {
    // Insert-only appends: the segment row no longer keeps a count that every append updated (a
    // new row version and a trigger per append, a third of an append's cost). The count is the
    // last seq + 1; an append is fenced by the entry before it and the primary key (queries.ts)
    // and notifies in its own statement. Dropping the column refuses writers of versions 1 and
    // 2 outright (their statements name it) rather than letting them compute seqs from a stale
    // count. A segment whose count disagrees with its rows stops the upgrade, naming it
    // (`check`): the count is the only record of a missing last entry, so it is checked before
    // it goes.
    version: 3,
    check: (s) => `
      SELECT segment_id, entry_count, held FROM (
        SELECT segment.segment_id, segment.entry_count,
          (SELECT count(*) FROM ${s}.podkit_entries entry WHERE entry.segment_id = segment.segment_id)::integer AS held,
          (SELECT max(seq) + 1 FROM ${s}.podkit_entries entry WHERE entry.segment_id = segment.segment_id) AS next
        FROM ${s}.podkit_segments segment
      ) counted
      WHERE entry_count IS DISTINCT FROM held OR entry_count IS DISTINCT FROM next
      ORDER BY segment_id COLLATE "C"`,
    up: (s) => `
      DROP TRIGGER podkit_segments_notify_append ON ${s}.podkit_segments;
      ALTER TABLE ${s}.podkit_segments DROP COLUMN entry_count;
      CREATE TRIGGER podkit_segments_notify_create
        AFTER INSERT ON ${s}.podkit_segments
        FOR EACH ROW EXECUTE FUNCTION ${s}.podkit_notify_append();`,
  },
  {
    // The sub-pod index: a child session's segments name its parent, so the children of a session
    // are one index lookup (`listChildSessions`) instead of a read of every session's first entry.
    // Existing segments are filled in from their segment_start's `parent` link: podkit writes it
    // as `"parent":{"session_id":"<id>",…}`, and ids are plain (letters, digits, - and _), so a
    // pattern finds it without parsing every body as JSON (a damaged body must not stop the upgrade).
    version: 4,
    up: (s) => `
      ALTER TABLE ${s}.podkit_segments ADD COLUMN parent_session_id text;
      UPDATE ${s}.podkit_segments segment
        SET parent_session_id = substring(entry.body FROM '"parent":\\{"session_id":"([A-Za-z0-9_-]{1,128})"')
        FROM ${s}.podkit_entries entry
        WHERE entry.segment_id = segment.segment_id AND entry.seq = 0
          AND entry.body LIKE '%"parent":{"session_id":%';
      CREATE INDEX podkit_segments_by_parent ON ${s}.podkit_segments (parent_session_id)
        WHERE parent_session_id IS NOT NULL;`,
  },
  {
    // Content-addressed blobs (docs/store-postgres.md, "Blobs"): the bytes of file contents a
    // session's entries name by digest. `last_put_at` is renewed by every put of bytes already
    // stored (the put's ON CONFLICT), and garbage collection deletes only rows still older than
    // its grace period in the DELETE itself, so a writer that stores a blob again just before it
    // appends the entry naming it never loses it to a collection running at the same moment.
    // Digests are plain hex: the "C" collation orders them by byte, as the listing pages by them.
    version: 5,
    up: (s) => `
      CREATE TABLE ${s}.podkit_blobs (
        digest text COLLATE "C" PRIMARY KEY CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
        bytes bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_put_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
];

/** The notification channel of committed segment writes (migration 2). */
export const APPEND_CHANNEL = "podkit_append";

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.length;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema name quoted for SQL, after checking it is a plain lower-case identifier. */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new PostgresStoreUsageError(
      `invalid PostgreSQL schema name ${JSON.stringify(schema)}: use lower-case letters, digits and "_", ` +
        "starting with a letter or _ (at most 63 characters)",
    );
  }
  return `"${schema}"`;
}

/** What `migrate` did. */
export interface MigrationResult {
  schema: string;
  /** Version before (0: no podkit tables yet) and after. */
  from: number;
  to: number;
}

/** Options of `migrate`. */
export interface MigrateOptions {
  /** PostgreSQL schema holding the tables (default `public`). */
  schema?: string;
}

async function currentVersion(client: pg.ClientBase, s: string): Promise<number | undefined> {
  const exists = await client.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [
    `${s}.podkit_schema_version`,
  ]);
  if (exists.rows[0]?.found == null) return undefined;
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${s}.podkit_schema_version`,
  );
  return result.rows[0]?.version ?? 0;
}

/**
 * Brings the schema to `SCHEMA_VERSION` in one transaction, serialized across machines by an
 * advisory lock, so pods starting together migrate once. Throws `SchemaTooNewError` when a newer
 * podkit already migrated further, and `PostgresStoreUsageError` when the database is not UTF-8
 * (a `SQL_ASCII` database would accept invalid UTF-8, which the log must reject as corruption).
 */
export async function migrate(
  target: string | pg.Pool,
  options: MigrateOptions = {},
): Promise<MigrationResult> {
  const schema = options.schema ?? "public";
  const s = quoteSchema(schema);
  const pool = typeof target === "string" ? new pg.Pool({ connectionString: target, max: 1 }) : target;
  let client: pg.PoolClient | undefined;
  try {
    client = await pool.connect();
    const encoding = await client.query<{ server_encoding: string }>("SHOW server_encoding");
    if (encoding.rows[0]?.server_encoding !== "UTF8") {
      throw new PostgresStoreUsageError(
        `the database's encoding is ${encoding.rows[0]?.server_encoding}, not UTF8; ` +
          "create the podkit database with ENCODING 'UTF8' so invalid text is refused",
      );
    }
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `podkit.store-postgres.migrate:${schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.podkit_schema_version (
         version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const from = (await currentVersion(client, s)) ?? 0;
    if (from > SCHEMA_VERSION) {
      throw new SchemaTooNewError({ schema, databaseVersion: from, supportedVersion: SCHEMA_VERSION });
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= from) continue;
      if (migration.check !== undefined) {
        const blocked = await client.query<{ segment_id: string; entry_count: number; held: number }>(
          migration.check(s),
        );
        if (blocked.rows.length > 0) {
          throw new SchemaUpgradeBlockedError({
            schema,
            version: migration.version,
            segments: blocked.rows.map((row) => ({
              segmentId: row.segment_id,
              counted: row.entry_count,
              held: row.held,
            })),
          });
        }
      }
      await client.query(migration.up(s));
      await client.query(`INSERT INTO ${s}.podkit_schema_version (version) VALUES ($1)`, [migration.version]);
    }
    await client.query("COMMIT");
    return { schema, from, to: SCHEMA_VERSION };
  } catch (error) {
    await client?.query("ROLLBACK").catch(() => undefined);
    if (
      error instanceof PostgresStoreUsageError ||
      SchemaTooNewError.isInstance(error) ||
      SchemaUpgradeBlockedError.isInstance(error)
    )
      throw error;
    throw new PostgresQueryError({
      operation: "migrating the session tables",
      where: `schema ${schema}`,
      cause: error,
    });
  } finally {
    client?.release();
    if (typeof target === "string") await pool.end();
  }
}

/**
 * What a store does on first use: reads the version without taking any lock or needing CREATE
 * rights, and migrates only when the schema is missing or older.
 */
export async function ensureSchema(pool: pg.Pool, schema: string): Promise<void> {
  const s = quoteSchema(schema);
  let version: number | undefined;
  const client = await pool.connect();
  try {
    version = await currentVersion(client, s);
  } finally {
    client.release();
  }
  if (version !== undefined && version > SCHEMA_VERSION) {
    throw new SchemaTooNewError({ schema, databaseVersion: version, supportedVersion: SCHEMA_VERSION });
  }
  if (version !== SCHEMA_VERSION) await migrate(pool, { schema });
}
