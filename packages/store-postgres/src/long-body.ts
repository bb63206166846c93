import { setImmediate as nextTurn } from "node:timers/promises";
import { SessionStoreError } from "@podkit/session-store";
import type pg from "pg";
import type { storeQueries } from "./queries.js";

// A fork or a compaction of a long session has a segment_start of tens of megabytes. Sent or
// received as one parameter or one column, the driver handles it in one piece: building the
// message and parsing the row held the event loop for a quarter of a second. Such a body goes in
// parts instead — uploaded into a temp table inside the transaction that creates the segment and
// joined there; read back as rows of UTF-8 byte slices — and the event loop turns between them.

/** Bodies longer than this many bytes (when read) or characters (when written) go in parts. */
export const LONG_BODY = 1 << 18;
/** Characters per part when a long body is uploaded. */
const UPLOAD_PART = 1 << 16;
/** Bytes per part when a long body is read. */
const READ_PART = 1 << 17;

/** `parts` (a serialized entry) regrouped into texts of about `UPLOAD_PART` characters (one if short). */
export function regroup(parts: readonly string[]): string[] {
  const groups: string[] = [];
  let pending = "";
  for (const part of parts) {
    pending += part;
    if (pending.length < UPLOAD_PART) continue;
    groups.push(pending);
    pending = "";
  }
  if (pending.length > 0 || groups.length === 0) groups.push(pending);
  return groups;
}

/**
 * Creates a segment whose `segment_start` is given in `groups` (more than one): one transaction
 * uploads the groups, then creates the segment row and its entries from them, so the whole
 * segment exists afterwards or none of it.
 */
export async function createWithUpload(
  pool: pg.Pool,
  sql: ReturnType<typeof storeQueries>,
  values: {
    segmentId: string;
    sessionId: string;
    groups: readonly string[];
    rest: string;
    parentSessionId: string | null;
  },
): Promise<void> {
  const client = await pool.connect();
  let failed = true;
  try {
    await client.query("BEGIN");
    await client.query(sql.createUpload);
    for (const [part, body] of values.groups.entries()) await client.query(sql.uploadPart, [part, body]);
    await client.query(sql.createSegmentUploaded, [
      values.segmentId,
      values.sessionId,
      values.rest,
      values.parentSessionId,
    ]);
    await client.query("COMMIT");
    failed = false;
  } finally {
    if (failed) await client.query("ROLLBACK").catch(() => undefined);
    // A connection in an unknown state (the error came from the socket) is not reused.
    client.release(failed);
  }
}

/**
 * The UTF-8 bytes of entry `seq` of a segment (longer than `LONG_BODY`), received as many small
 * rows of one statement so that no single row is a long piece of work for the driver.
 */
export async function readLongBody(
  pool: pg.Pool,
  sql: ReturnType<typeof storeQueries>,
  segmentId: string,
  seq: number,
): Promise<Buffer> {
  const result = await pool.query<[number, Buffer]>({
    text: sql.bodyParts,
    values: [segmentId, seq, READ_PART],
    rowMode: "array",
  });
  if (result.rows.length === 0) {
    throw new SessionStoreError(
      `entry seq ${seq} of segment ${segmentId} was removed while it was being read (a truncation); read the segment again`,
    );
  }
  const parts: Buffer[] = new Array(result.rows.length);
  let total = 0;
  for (const [part, bytes] of result.rows) {
    parts[part] = bytes;
    total += bytes.length;
  }
  // Joined a few megabytes at a time: one copy of tens of megabytes is a long piece of work too.
  const body = Buffer.allocUnsafe(total);
  let at = 0;
  for (const [index, bytes] of parts.entries()) {
    at += bytes.copy(body, at);
    if (index % 16 === 15) await nextTurn();
  }
  return body;
}
