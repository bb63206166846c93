import type { Pause } from "./time-slice.js";

// A segment_start carries the whole history of its segment: after a drift fork or a compaction
// of a long session it is one line of tens of megabytes. `JSON.stringify`/`JSON.parse` of such a
// line are single synchronous calls that held the event loop for up to 1.4 s. Here the history
// array is serialized and parsed one item at a time, pausing between slices; everything else
// of the line goes through the ordinary calls. The result is exactly what the one-call versions
// produce (same text, same object, key order included).

/** Histories with at least this many items are serialized in slices. */
export const SLICED_HISTORY_ITEMS = 512;
/** Lines of at least this many bytes are parsed in slices when they hold a history. */
export const SLICED_LINE_BYTES = 1 << 20;
/** Bytes scanned between two pause checks. */
const SCAN_SLICE = 1 << 18;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const HISTORY_KEY = Buffer.from("history", "latin1");

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
}

/** Where a line's `history` array and its items lie. */
export interface HistorySplit {
  /** Offset of the array's `[` and just past its `]`. */
  arrayStart: number;
  arrayEnd: number;
  /** `[start, end)` of each item, in order. */
  items: number[];
}

/**
 * Finds the `history` member of the top-level JSON object in `bytes[start, end)` and the byte
 * range of each of its items (UTF-8: every structural character is ASCII and never part of a
 * multi-byte sequence). Returns null whenever the line is not plainly shaped so (no such member,
 * a duplicate or escaped top-level key, not an array, unbalanced): the caller then parses the
 * line in one call, which also words any error exactly.
 */
export async function splitHistory(
  bytes: Uint8Array,
  start: number,
  end: number,
  pause: Pause,
): Promise<HistorySplit | null> {
  let at = start;
  while (at < end && isSpace(bytes[at] as number)) at++;
  if (bytes[at] !== OPEN_BRACE) return null;
  at++;
  let depth = 1;
  let inString = false;
  let keyStart = -1;
  let keyEscaped = false;
  let expectKey = true;
  let lastKeyIsHistory = false;
  let arrayStart = -1;
  let arrayEnd = -1;
  let itemStart = -1;
  const items: number[] = [];
  const closeItem = (at: number): boolean => {
    if (itemStart === -1) return false;
    let itemEnd = at;
    while (itemEnd > itemStart && isSpace(bytes[itemEnd - 1] as number)) itemEnd--;
    items.push(itemStart, itemEnd);
    itemStart = -1;
    return true;
  };
  for (let sliceEnd = Math.min(end, at + SCAN_SLICE); ; sliceEnd = Math.min(end, at + SCAN_SLICE)) {
    for (; at < sliceEnd; at++) {
      const byte = bytes[at] as number;
      if (inString) {
        if (byte === BACKSLASH) {
          if (keyStart !== -1) keyEscaped = true;
          at++;
        } else if (byte === QUOTE) {
          inString = false;
          if (keyStart !== -1) {
            if (keyEscaped) return null; // a key JSON.parse would read differently from its bytes
            const isHistory =
              at - keyStart === HISTORY_KEY.length &&
              Buffer.compare(HISTORY_KEY, bytes.subarray(keyStart, at)) === 0;
            if (isHistory && arrayStart !== -1) return null; // a second "history": JSON.parse keeps the last
            lastKeyIsHistory = isHistory;
            keyStart = -1;
          }
        }
        continue;
      }
      if (isSpace(byte)) continue;
      if (depth === 0) return null; // something after the object's closing brace
      if (depth === 2 && arrayStart !== -1 && arrayEnd === -1 && itemStart === -1) {
        if (byte === COMMA || byte === CLOSE_BRACKET) {
          // `[,` or `,,` or `,]`: an empty item; `[]` is the empty history.
          if (
            !(byte === CLOSE_BRACKET && items.length === 0 && bytes[lastNonSpace(bytes, at)] === OPEN_BRACKET)
          )
            return null;
        } else {
          itemStart = at;
        }
      }
      switch (byte) {
        case QUOTE:
          inString = true;
          if (depth === 1 && expectKey) {
            keyStart = at + 1;
            keyEscaped = false;
            expectKey = false;
          }
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          if (depth === 1) {
            if (!lastKeyIsHistory) {
              depth++;
              break;
            }
            if (byte !== OPEN_BRACKET) return null;
            arrayStart = at;
          }
          depth++;
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          depth--;
          if (depth === 1 && arrayStart !== -1 && arrayEnd === -1) {
            if (byte !== CLOSE_BRACKET) return null;
            closeItem(at);
            arrayEnd = at + 1;
          }
          break;
        case COMMA:
          if (depth === 1) {
            expectKey = true;
            lastKeyIsHistory = false;
          } else if (depth === 2 && arrayStart !== -1 && arrayEnd === -1) {
            closeItem(at);
          }
          break;
        case COLON:
          break;
        default:
          break;
      }
    }
    if (at >= end) break;
    await pause();
  }
  if (inString || arrayStart === -1 || arrayEnd === -1) return null;
  return { arrayStart, arrayEnd, items };
}

function lastNonSpace(bytes: Uint8Array, before: number): number {
  let at = before - 1;
  while (at > 0 && isSpace(bytes[at] as number)) at--;
  return at;
}

/** A JSON text that did not parse: which part, and `JSON.parse`'s message. */
export class SlicedParseError extends Error {}

/**
 * `JSON.parse` of `bytes[start, end)` followed by `tail` (the closing text a frame took off, or
 * ""), with the `history` array's items parsed one by one between pauses. Throws
 * `SlicedParseError` for text that is not JSON.
 */
export async function parseWithHistory(
  bytes: Buffer,
  start: number,
  end: number,
  tail: string,
  pause: Pause,
): Promise<unknown> {
  const split = await splitHistory(bytes, start, end, pause);
  const parse = (text: string, what: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new SlicedParseError(`${what}: ${(error as Error).message}`);
    }
  };
  if (split === null) return parse(bytes.toString("utf8", start, end) + tail, "the line");
  const skeleton = parse(
    `${bytes.toString("utf8", start, split.arrayStart)}[]${bytes.toString("utf8", split.arrayEnd, end)}${tail}`,
    "the line around its history",
  ) as { history: unknown[] };
  const history: unknown[] = new Array(split.items.length / 2);
  for (let i = 0; i < split.items.length; i += 2) {
    history[i / 2] = parse(
      bytes.toString("utf8", split.items[i], split.items[i + 1]),
      `history item ${i / 2}`,
    );
    await pause();
  }
  skeleton.history = history;
  return skeleton;
}

/**
 * The JSON text of `entry` (exactly `JSON.stringify(entry)`) as parts to concatenate, its
 * `history` items serialized one by one between pauses.
 */
export async function stringifyWithHistory(
  entry: { history: readonly unknown[] },
  pause: Pause,
): Promise<string[]> {
  // A marker no real value can contain stands in for the history in the one-call serialization
  // of everything else; the parts are the text around it and the items.
  const marker = `\u0000podkit-history-${Math.random().toString(36).slice(2)}`;
  const around = JSON.stringify({ ...entry, history: marker });
  const quoted = JSON.stringify(marker);
  const at = around.indexOf(quoted);
  const parts = [around.slice(0, at), "["];
  const history = entry.history;
  for (let i = 0; i < history.length; i++) {
    const text = JSON.stringify(history[i]);
    parts.push(i === 0 ? text : `,${text}`);
    await pause();
  }
  parts.push("]", around.slice(at + quoted.length));
  return parts;
}

/** The UTF-8 bytes of `text`, encoded a slice at a time between pauses. */
export async function utf8Sliced(text: string, pause: Pause): Promise<Buffer> {
  const chunks: Buffer[] = [];
  // Encoding a two-byte string takes a while: small slices keep each piece of work short.
  const slice = 1 << 16;
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + slice);
    // Never split a surrogate pair: end before its low half.
    const code = text.charCodeAt(end);
    if (end < text.length && code >= 0xdc00 && code <= 0xdfff) end--;
    chunks.push(Buffer.from(text.slice(at, end), "utf8"));
    at = end;
    await pause();
  }
  return Buffer.concat(chunks);
}
