import type { z } from "zod";
import { CorruptEntryError, InvalidEntryError, UnsupportedFormatError } from "../errors.js";
import {
  createEntrySchema,
  type Entry,
  type EntrySchemas,
  MinimalConfigSchema,
  MinimalItemSchema,
  READABLE_VERSIONS,
} from "./entry-schema.js";
import { compileFastCheck, type FastCheck } from "./fast-check.js";
import {
  parseWithHistory,
  SLICED_HISTORY_ITEMS,
  SLICED_LINE_BYTES,
  SlicedParseError,
  stringifyWithHistory,
  utf8Sliced,
} from "./large-entry.js";
import { type Pause, timeSlicer } from "./time-slice.js";

/**
 * Turns entries into their JSON text and back, validating both ways. The text is the entry
 * alone; how a backend frames it (FsStore's v2 lines add `seq` and `crc`) is up to the backend.
 */
export interface EntryCodec<TItem> {
  /** Validates and serializes one entry (no trailing newline). Throws `InvalidEntryError`. */
  encode(entry: Entry<TItem>): string;
  /**
   * `encode` for an entry that may be large (a `segment_start` holding a long history): the same
   * text as parts to concatenate, validated and serialized item by item, yielding to the event
   * loop between slices of work (`pause`, default every few milliseconds).
   */
  encodeSliced(entry: Entry<TItem>, pause?: Pause): Promise<string[]>;
  /**
   * Parses and validates one committed line. Throws `CorruptEntryError`, or
   * `UnsupportedFormatError` for a segment version or an entry kind this package does not know:
   * the caller has verified the line is intact (FsStore's frame, a database row), so a kind it
   * does not know comes from a newer writer. A store whose lines carry no integrity check (an
   * unframed v1 file) reports an unknown kind as corruption instead.
   */
  decode(line: string, file: string, lineNumber: number): Entry<TItem>;
  /**
   * `decode` for a line that may be large — as text, or as its UTF-8 bytes (the database must
   * have checked them): a long `segment_start` is parsed and validated item by item, yielding to
   * the event loop between slices of work; a short line is `decode`d.
   */
  decodeSliced(line: string | Buffer, file: string, lineNumber: number, pause?: Pause): Promise<Entry<TItem>>;
  /** Validates an already-parsed value, as `decode` does after `JSON.parse`. */
  check(value: unknown, file: string, lineNumber: number): Entry<TItem>;
  /** `check` that validates a long history item by item between `pause`s (used by `decodeSliced`). */
  checkSliced(value: unknown, file: string, lineNumber: number, pause: Pause): Promise<Entry<TItem>>;
}

function describeIssues(error: z.ZodError, prefix = ""): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = [prefix, ...issue.path.map(String)].filter((part) => part !== "").join(".");
      return `${path.length > 0 ? path : "(entry)"}: ${issue.message}`;
    })
    .join("; ");
}

/** True for an object whose `history` is long enough to be handled item by item. */
function hasLongHistory(value: unknown): value is { kind: unknown; history: unknown[] } {
  const history = (value as { history?: unknown }).history;
  return Array.isArray(history) && history.length >= SLICED_HISTORY_ITEMS;
}

/**
 * A codec for entries whose items and config match the given schemas (default: items are
 * objects with a string `type`, config any object). Pass llm-worker's `ItemSchema` and
 * `RequestConfigSchema` to validate a log as strictly as the worker needs it.
 */
export function createEntryCodec<TItem>(schemas: EntrySchemas<TItem> = {}): EntryCodec<TItem> {
  const itemSchema = schemas.itemSchema ?? (MinimalItemSchema as unknown as z.ZodType<TItem>);
  const schema = createEntrySchema(itemSchema, schemas.configSchema ?? MinimalConfigSchema);
  // Answers "valid" without zod's copying for nearly every entry; zod decides the rest and words errors.
  const fast = compileFastCheck(schema);
  const fastItem: FastCheck = compileFastCheck(itemSchema) ?? ((item) => itemSchema.safeParse(item).success);
  const knownKinds = new Set<unknown>(schema.options.map((option) => option.shape.kind.value));

  /** The first problem of `value` as a message, or undefined when it is a valid entry. */
  const problem = (value: unknown): string | undefined => {
    if (fast?.(value)) return undefined;
    const result = schema.safeParse(value);
    if (result.success) return undefined;
    const kind = (value as { kind?: unknown }).kind;
    return `${typeof kind === "string" ? `"${kind}" entry` : "entry"}: ${describeIssues(result.error)}`;
  };
  /** The problem of a long history's owner checked without its items, then of each item. */
  const problemSliced = async (value: { kind: unknown; history: unknown[] }, pause: Pause) => {
    const shell = problem({ ...value, history: [] });
    if (shell !== undefined) return shell;
    const history = value.history;
    for (let i = 0; i < history.length; i++) {
      if (!fastItem(history[i])) {
        const result = itemSchema.safeParse(history[i]);
        if (!result.success)
          return `"${String(value.kind)}" entry: ${describeIssues(result.error, `history.${i}`)}`;
      }
      await pause();
    }
    return undefined;
  };

  const precheck = (value: unknown, file: string, lineNumber: number): Record<string, unknown> => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new CorruptEntryError({ file, line: lineNumber, reason: "not a JSON object" });
    }
    const record = value as Record<string, unknown>;
    if (record.kind === "segment_start" && !READABLE_VERSIONS.includes(record.v as number)) {
      throw new UnsupportedFormatError({ file, line: lineNumber, version: record.v });
    }
    return record;
  };
  /** The error for a line that is not a valid entry: a kind from a newer writer, else corruption. */
  const invalid = (value: unknown, file: string, lineNumber: number, reason: string) => {
    const kind = (value as { kind?: unknown }).kind;
    if (typeof kind === "string" && !knownKinds.has(kind)) {
      return new UnsupportedFormatError({ file, line: lineNumber, kind });
    }
    return new CorruptEntryError({ file, line: lineNumber, reason });
  };
  const check = (value: unknown, file: string, lineNumber: number): Entry<TItem> => {
    precheck(value, file, lineNumber);
    const reason = problem(value);
    if (reason !== undefined) throw invalid(value, file, lineNumber, reason);
    // The parsed input, not zod's output: zod rebuilds objects and would reorder item keys.
    return value as Entry<TItem>;
  };
  const serialize = (entry: Entry<TItem>): string => {
    try {
      return JSON.stringify(entry);
    } catch (cause) {
      throw new InvalidEntryError({
        kind: entry.kind,
        issues: `not serializable as JSON (${String(cause)})`,
      });
    }
  };

  const decode = (line: string, file: string, lineNumber: number): Entry<TItem> => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      const reason = line.length === 0 ? "empty line" : `not valid JSON (${(cause as Error).message})`;
      throw new CorruptEntryError({ file, line: lineNumber, reason, cause });
    }
    return check(value, file, lineNumber);
  };
  const checkSliced = async (value: unknown, file: string, lineNumber: number, pause: Pause) => {
    precheck(value, file, lineNumber);
    if (!hasLongHistory(value)) return check(value, file, lineNumber);
    const reason = await problemSliced(value, pause);
    if (reason !== undefined) throw invalid(value, file, lineNumber, reason);
    return value as Entry<TItem>;
  };
  const encode = (entry: Entry<TItem>): string => {
    // The fast check inline: this runs on every append.
    if (fast === undefined || !fast(entry)) {
      const reason = problem(entry);
      if (reason !== undefined) throw new InvalidEntryError({ kind: entry.kind, issues: reason });
    }
    return serialize(entry);
  };

  return {
    encode,
    async encodeSliced(entry, pause = timeSlicer()) {
      if (!hasLongHistory(entry)) return [encode(entry)];
      const reason = await problemSliced(entry, pause);
      if (reason !== undefined) throw new InvalidEntryError({ kind: entry.kind, issues: reason });
      try {
        return await stringifyWithHistory(entry, pause);
      } catch (cause) {
        throw new InvalidEntryError({
          kind: entry.kind,
          issues: `not serializable as JSON (${String(cause)})`,
        });
      }
    },
    decode,
    async decodeSliced(line, file, lineNumber, pause = timeSlicer()) {
      if (typeof line === "string" && line.length < SLICED_LINE_BYTES / 3)
        return decode(line, file, lineNumber);
      if (typeof line !== "string" && line.length < SLICED_LINE_BYTES)
        return decode(line.toString("utf8"), file, lineNumber);
      const bytes = typeof line === "string" ? await utf8Sliced(line, pause) : line;
      let value: unknown;
      try {
        value = await parseWithHistory(bytes, 0, bytes.length, "", pause);
      } catch (error) {
        if (!(error instanceof SlicedParseError)) throw error;
        throw new CorruptEntryError({
          file,
          line: lineNumber,
          reason: `not valid JSON (${error.message})`,
          cause: error,
        });
      }
      return checkSliced(value, file, lineNumber, pause);
    },
    check,
    checkSliced,
  };
}
