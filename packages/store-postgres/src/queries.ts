import { APPEND_CHANNEL } from "./migrations.js";

/**
 * The statements of `PostgresStore`, for the quoted schema `s`. Ids are ordered with the "C"
 * collation: byte order, the same lexical order as the filesystem store (UUIDv7 ids sort by
 * creation time), whatever the database's default collation.
 */
export function storeQueries(s: string) {
  return {
    // Segment row and entries in one statement: the whole segment exists afterwards, or none of it.
    // The segment_start comes as a parameter of its own ($3), the other entries as a JSON array
    // of their texts ($4): the driver escapes a text[] character by character in JavaScript
    // (a quarter of a second for the thousands of entries a fork carries), JSON.stringify does it
    // natively; the server gives back each text exactly.
    createSegment: createSegment(s, "$3::text", "$4", "$5::text"),
    // The same with a long segment_start uploaded in parts beforehand (see `long-body.ts`).
    createSegmentUploaded: createSegment(
      s,
      `(SELECT string_agg(body, '' ORDER BY part) FROM ${UPLOAD_TABLE})`,
      "$3",
      "$4::text",
    ),
    createUpload: `CREATE TEMP TABLE ${UPLOAD_TABLE} (part integer PRIMARY KEY, body text NOT NULL) ON COMMIT DROP`,
    uploadPart: `INSERT INTO ${UPLOAD_TABLE} (part, body) VALUES ($1, $2)`,
    // One entry's text as UTF-8 bytes in parts of $3 bytes, numbered from 0. The bytes are made
    // once (the subquery is a fence); each part is then a cheap byte slice of them (a substring
    // of the text itself would find its character offset, or decompress it, from the start).
    bodyParts: `
      SELECT part, substring(entry.bytes FROM part * $3::integer + 1 FOR $3::integer)
      FROM (
        SELECT convert_to(body, 'UTF8') AS bytes FROM ${s}.podkit_entries WHERE segment_id = $1 AND seq = $2
        OFFSET 0
      ) entry, generate_series(0, (length(entry.bytes) - 1) / $3::integer) AS part`,
    // The conditional append (schema version 3): insert-only. The entries go at seq $3 (the
    // expected count) and after, only if the entry before them ($3 - 1) is there — read with a
    // FOR KEY SHARE lock, so a truncation deleting it waits for this append, and an append whose
    // entry was deleted meanwhile finds nothing and inserts nothing (READ COMMITTED re-checks a
    // locked row) — and only if the segment belongs to the session. Two writers with the same
    // expected count both pass that check; the primary key (segment_id, seq) admits only the
    // first, the second waits for it and then fails with a unique violation: drift. The segment
    // row is only read: no new row version, no row lock held by the update of a counter.
    // Only when both checks pass (a CASE evaluates in order) it notifies listeners, delivered at
    // commit (a unique violation rolls the notification back with the statement). No RETURNING:
    // the row count says whether it appended, and a statement without a result row spares the
    // driver a row description to parse on every append.
    append: append(
      s,
      "($3::integer + entry.ord - 1)::integer, entry.body",
      "json_array_elements_text($4::json) WITH ORDINALITY AS entry(body, ord)",
    ),
    // The same for one entry, given as text ($4) rather than an array of one.
    appendOne: append(s, "$3::integer, $4::text", undefined),
    // An append without an expected count: after the last entry, whatever it is (locked as above,
    // so a truncation in progress is waited for). A concurrent writer taking the same seq makes
    // it fail with a unique violation; the store then tries again.
    appendAtEnd: `
      INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
      SELECT $1, (last.seq + entry.ord)::integer, entry.body
      FROM (
        SELECT seq FROM ${s}.podkit_entries WHERE segment_id = $1 ORDER BY seq DESC LIMIT 1 FOR KEY SHARE
      ) last, json_array_elements_text($3::json) WITH ORDINALITY AS entry(body, ord)
      WHERE EXISTS (SELECT FROM ${s}.podkit_segments WHERE segment_id = $1 AND session_id = $2)
      RETURNING seq + 1 AS entry_count, ${notify(s)}`,
    // The count is the last seq + 1, read from the primary key's index (no counter to update).
    count: `
      SELECT (SELECT max(seq) + 1 FROM ${s}.podkit_entries WHERE segment_id = $1) AS entry_count
      FROM ${s}.podkit_segments WHERE segment_id = $1 AND session_id = $2`,
    // Truncation, in one transaction: the segment row locked (truncations of one segment take
    // turns), then its last entry locked FOR UPDATE, which waits for an append holding the lock
    // on it and keeps every later append out until the truncation commits (it would need that
    // lock); `lastSeq` re-reads the last seq afterwards in case an append landed meanwhile.
    lockSegment: `SELECT FROM ${s}.podkit_segments WHERE segment_id = $1 AND session_id = $2 FOR UPDATE`,
    lockLast: `SELECT seq FROM ${s}.podkit_entries WHERE segment_id = $1 ORDER BY seq DESC LIMIT 1 FOR UPDATE`,
    lastSeq: `SELECT max(seq) AS seq FROM ${s}.podkit_entries WHERE segment_id = $1`,
    truncate: `
      WITH cut AS (DELETE FROM ${s}.podkit_entries WHERE segment_id = $1 AND seq >= $3::integer)
      SELECT ${notify(s)}`,
    // The entries at seq $3 and after (one row of nulls when there are none; no row when the
    // segment does not exist). No ORDER BY: the reader places each row by its seq (a server-side
    // sort of a long segment spilled to disk and took as long as everything else in a restore).
    // A body longer than $4 bytes comes as NULL with its length, and is read in parts.
    readFrom: `
      SELECT entry.seq,
        CASE WHEN octet_length(entry.body) > $4::integer THEN NULL ELSE entry.body END,
        octet_length(entry.body)
      FROM ${s}.podkit_segments segment
      LEFT JOIN ${s}.podkit_entries entry
        ON entry.segment_id = segment.segment_id AND entry.seq >= $3::integer
      WHERE segment.segment_id = $1 AND segment.session_id = $2`,
    describe: `
      SELECT
        CASE WHEN octet_length(first.body) > $3::integer THEN NULL ELSE first.body END AS first,
        CASE WHEN octet_length(last.body) > $3::integer THEN NULL ELSE last.body END AS last,
        first.seq AS first_seq, last.seq AS last_seq
      FROM ${s}.podkit_segments segment
      LEFT JOIN ${s}.podkit_entries first ON first.segment_id = segment.segment_id AND first.seq = 0
      LEFT JOIN LATERAL (
        SELECT seq, body FROM ${s}.podkit_entries WHERE segment_id = segment.segment_id ORDER BY seq DESC LIMIT 1
      ) last ON true
      WHERE segment.segment_id = $1 AND segment.session_id = $2`,
    listSessions: `
      SELECT DISTINCT session_id COLLATE "C" AS session_id FROM ${s}.podkit_segments
      ORDER BY 1 DESC`,
    listSegments: `
      SELECT segment_id FROM ${s}.podkit_segments WHERE session_id = $1
      ORDER BY segment_id COLLATE "C" DESC`,
    lookup: `SELECT session_id FROM ${s}.podkit_segments WHERE segment_id = $1`,
    // The sub-pod index (migration 4): children by their parent, each child once.
    listChildSessions: `
      SELECT DISTINCT session_id COLLATE "C" AS session_id FROM ${s}.podkit_segments
      WHERE parent_session_id = $1 AND session_id <> $1
      ORDER BY 1 DESC`,
  };
}

/** Where a long `segment_start` is uploaded in parts, inside the transaction that creates its segment. */
const UPLOAD_TABLE = "pg_temp.podkit_upload";

/**
 * The statement creating a segment whose `segment_start` text is `start`, the other entries `rest`,
 * and the parent session of a sub-pod's segment `parent` (SQL; null for a root).
 */
function createSegment(s: string, start: string, rest: string, parent: string): string {
  return `
      WITH segment AS (
        INSERT INTO ${s}.podkit_segments (segment_id, session_id, parent_session_id) VALUES ($1, $2, ${parent})
        RETURNING segment_id
      )
      INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
      SELECT segment.segment_id, 0, ${start} FROM segment
      UNION ALL
      SELECT segment.segment_id, entry.ord::integer, entry.body
      FROM segment, json_array_elements_text(${rest}::json) WITH ORDINALITY AS entry(body, ord)`;
}

/**
 * An append at seq $3 of the entries `values` (SQL of the seq and body columns, selected from
 * `from` when given): see `append` in `storeQueries`.
 */
function append(s: string, values: string, from: string | undefined): string {
  return `
      INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
      SELECT $1, ${values}${from === undefined ? "" : ` FROM ${from}`}
      WHERE CASE
        WHEN EXISTS (SELECT FROM ${s}.podkit_segments WHERE segment_id = $1 AND session_id = $2)
          AND EXISTS (SELECT FROM ${s}.podkit_entries WHERE segment_id = $1 AND seq = $3::integer - 1 FOR KEY SHARE)
        THEN ${notify(s)} IS NOT NULL
        ELSE false
      END`;
}

/**
 * The notification of a committed write to segment $1 of session $2 (channel `podkit_append`,
 * payload `<schema>/<session>/<segment>`, see `listenForAppends`); PostgreSQL folds identical
 * notifications of one transaction into one.
 */
function notify(s: string): string {
  return `pg_notify('${APPEND_CHANNEL}', '${s.slice(1, -1)}/' || $2::text || '/' || $1::text)`;
}
