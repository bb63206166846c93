import { createHash } from "node:crypto";
import { isSessionId } from "../http/session-id.js";

/**
 * Where a client is in a session's event stream: the SSE id of the last committed entry it has.
 * Format `<segmentId>:<index>:<check>` — the segment, the entry's index in it (0 is its
 * `segment_start`) and 8 characters of a hash of the entry. The check catches a client whose copy
 * of a segment is no longer the log's (a turn cancelled before any output is cut from the log and
 * its indices are written again); `?after=` also accepts `<segmentId>:<index>` without it.
 */
export interface StreamPosition {
  segmentId: string;
  index: number;
  check: string | undefined;
}

const INDEX = /^(0|[1-9][0-9]{0,9})$/;
const CHECK = /^[A-Za-z0-9_-]{8}$/;

/** The SSE id of entry `index` of `segmentId` whose JSON text is `json`. */
export function eventId(segmentId: string, index: number, check: string): string {
  return `${segmentId}:${index}:${check}`;
}

/** The check of an entry's JSON text. */
export function entryCheck(json: string): string {
  return createHash("sha256").update(json).digest("base64url").slice(0, 8);
}

/** Parses a `Last-Event-ID` or `?after=` value; undefined when it is not a position. */
export function parseStreamPosition(value: string): StreamPosition | undefined {
  const parts = value.split(":");
  if (parts.length !== 2 && parts.length !== 3) return undefined;
  const [segmentId, index, check] = parts as [string, string, string | undefined];
  if (!isSessionId(segmentId) || !INDEX.test(index)) return undefined;
  if (check !== undefined && !CHECK.test(check)) return undefined;
  return { segmentId, index: Number(index), check };
}
