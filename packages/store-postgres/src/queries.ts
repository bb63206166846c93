/**
 * The statements of `PostgresStore`, for the quoted schema `s`. Ids are ordered with the "C"
 * collation: byte order, the same lexical order as the filesystem store (UUIDv7 ids sort by
 * creation time), whatever the database's default collation.
 */
export function storeQueries(s: string) {
  return {
    // Segment row and entries in one statement: the whole segment exists afterwards, or none of it.
    // The segment_start comes as a parameter of its own ($4), the other entries as a JSON array
    // of their texts ($5): the driver escapes a text[] character by character in JavaScript
    // (a quarter of a second for the thousands of entries a fork carries), JSON.stringify does it
    // natively; the server gives back each text exactly.
    createSegment: createSegment(s, "$4::text", "$5"),
    // The same with a long segment_start uploaded in parts beforehand (see `long-body.ts`).
    createSegmentUploaded: createSegment(
      s,
      `(SELECT string_agg(body, '' ORDER BY part) FROM ${UPLOAD_TABLE})`,
      "$4",
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
    // The conditional append. The UPDATE takes the segment row's lock; a concurrent append waits
    // for it and then re-evaluates the WHERE against the committed row (READ COMMITTED), so the
    // loser of a race updates nothing and inserts nothing.
    append: `
      WITH segment AS (
        UPDATE ${s}.podkit_segments SET entry_count = entry_count + $3::integer
        WHERE segment_id = $1 AND session_id = $2 AND ($4::integer IS NULL OR entry_count = $4::integer)
        RETURNING entry_count
      ), inserted AS (
        INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
        SELECT $1, (segment.entry_count - $3::integer + entry.ord - 1)::integer, entry.body
        FROM segment, json_array_elements_text($5::json) WITH ORDINALITY AS entry(body, ord)
      )
      SELECT entry_count FROM segment`,
    // The same for one entry, given as text ($4) rather than an array of one.
    appendOne: `
      WITH segment AS (
        UPDATE ${s}.podkit_segments SET entry_count = entry_count + 1
        WHERE segment_id = $1 AND session_id = $2 AND ($3::integer IS NULL OR entry_count = $3::integer)
        RETURNING entry_count
      )
      INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
      SELECT $1, segment.entry_count - 1, $4::text FROM segment
      RETURNING seq + 1 AS entry_count`,
    count: `SELECT entry_count FROM ${s}.podkit_segments WHERE segment_id = $1 AND session_id = $2`,
    lockSegment: `SELECT entry_count FROM ${s}.podkit_segments WHERE segment_id = $1 AND session_id = $2 FOR UPDATE`,
    truncate: `
      WITH cut AS (DELETE FROM ${s}.podkit_entries WHERE segment_id = $1 AND seq >= $2::integer)
      UPDATE ${s}.podkit_segments SET entry_count = $2::integer WHERE segment_id = $1`,
    // The entries at seq $3 and after, each row with the segment's count (one row of nulls when
    // there are none; no row when the segment does not exist). No ORDER BY: the reader places
    // each row by its seq (a server-side sort of a long segment spilled to disk and took as long
    // as everything else in a restore).
    // A body longer than $4 bytes comes as NULL with its length, and is read in parts.
    readFrom: `
      SELECT segment.entry_count, entry.seq,
        CASE WHEN octet_length(entry.body) > $4::integer THEN NULL ELSE entry.body END,
        octet_length(entry.body)
      FROM ${s}.podkit_segments segment
      LEFT JOIN ${s}.podkit_entries entry
        ON entry.segment_id = segment.segment_id AND entry.seq >= $3::integer
      WHERE segment.segment_id = $1 AND segment.session_id = $2`,
    describe: `
      SELECT segment.entry_count,
        CASE WHEN octet_length(first.body) > $3::integer THEN NULL ELSE first.body END AS first,
        CASE WHEN octet_length(last.body) > $3::integer THEN NULL ELSE last.body END AS last,
        first.seq AS first_seq, last.seq AS last_seq
      FROM ${s}.podkit_segments segment
      LEFT JOIN ${s}.podkit_entries first ON first.segment_id = segment.segment_id AND first.seq = 0
      LEFT JOIN ${s}.podkit_entries last
        ON last.segment_id = segment.segment_id AND last.seq = segment.entry_count - 1
      WHERE segment.segment_id = $1 AND segment.session_id = $2`,
    listSessions: `
      SELECT DISTINCT session_id COLLATE "C" AS session_id FROM ${s}.podkit_segments
      ORDER BY 1 DESC`,
    listSegments: `
      SELECT segment_id FROM ${s}.podkit_segments WHERE session_id = $1
      ORDER BY segment_id COLLATE "C" DESC`,
    lookup: `SELECT session_id FROM ${s}.podkit_segments WHERE segment_id = $1`,
  };
}

/** Where a long `segment_start` is uploaded in parts, inside the transaction that creates its segment. */
const UPLOAD_TABLE = "pg_temp.podkit_upload";

/** The statement creating a segment whose `segment_start` text is `start`, the other entries `rest` (SQL). */
function createSegment(s: string, start: string, rest: string): string {
  return `
      WITH segment AS (
        INSERT INTO ${s}.podkit_segments (segment_id, session_id, entry_count) VALUES ($1, $2, $3)
        RETURNING segment_id
      )
      INSERT INTO ${s}.podkit_entries (segment_id, seq, body)
      SELECT segment.segment_id, 0, ${start} FROM segment
      UNION ALL
      SELECT segment.segment_id, entry.ord::integer, entry.body
      FROM segment, json_array_elements_text(${rest}::json) WITH ORDINALITY AS entry(body, ord)`;
}
