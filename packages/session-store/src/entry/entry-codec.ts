import type { z } from "zod";
import { CorruptEntryError, InvalidEntryError, UnsupportedFormatError } from "../errors.js";
import { createEntrySchema, type Entry, READABLE_VERSIONS } from "./entry-schema.js";
import { compileFastCheck } from "./fast-check.js";

/**
 * Turns entries into their JSON text and back, validating both ways. The text is the entry
 * alone; how a backend frames it (FsStore's v2 lines add `seq` and `crc`) is up to the backend.
 */
export interface EntryCodec<TItem> {
  /** Validates and serializes one entry (no trailing newline). Throws `InvalidEntryError`. */
  encode(entry: Entry<TItem>): string;
  /** Parses and validates one committed line. Throws `CorruptEntryError` or `UnsupportedFormatError`. */
  decode(line: string, file: string, lineNumber: number): Entry<TItem>;
  /** Validates an already-parsed value, as `decode` does after `JSON.parse`. */
  check(value: unknown, file: string, lineNumber: number): Entry<TItem>;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(entry)"}: ${issue.message}`)
    .join("; ");
}

/** A codec for entries whose items match `itemSchema`. */
export function createEntryCodec<TItem>(itemSchema: z.ZodType<TItem>): EntryCodec<TItem> {
  const schema = createEntrySchema(itemSchema);
  // Answers "valid" without zod's copying for nearly every entry; zod decides the rest and words errors.
  const fast = compileFastCheck(schema);

  const check = (value: unknown, file: string, lineNumber: number): Entry<TItem> => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new CorruptEntryError({ file, line: lineNumber, reason: "not a JSON object" });
    }
    const record = value as Record<string, unknown>;
    if (record.kind === "segment_start" && !READABLE_VERSIONS.includes(record.v as number)) {
      throw new UnsupportedFormatError({ file, line: lineNumber, version: record.v });
    }
    if (fast?.(value)) return value as Entry<TItem>;
    const result = schema.safeParse(value);
    if (!result.success) {
      const kind = typeof record.kind === "string" ? `"${record.kind}" entry` : "entry";
      throw new CorruptEntryError({
        file,
        line: lineNumber,
        reason: `${kind}: ${describeIssues(result.error)}`,
      });
    }
    // The parsed input, not zod's output: zod rebuilds objects and would reorder item keys.
    return value as Entry<TItem>;
  };

  return {
    encode(entry) {
      if (fast?.(entry) !== true) {
        const result = schema.safeParse(entry);
        if (!result.success) {
          throw new InvalidEntryError({
            kind: (entry as { kind?: unknown }).kind,
            issues: describeIssues(result.error),
          });
        }
      }
      let line: string;
      try {
        line = JSON.stringify(entry);
      } catch (cause) {
        throw new InvalidEntryError({
          kind: entry.kind,
          issues: `not serializable as JSON (${String(cause)})`,
        });
      }
      return line;
    },
    decode(line, file, lineNumber) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (cause) {
        const reason = line.length === 0 ? "empty line" : `not valid JSON (${(cause as Error).message})`;
        throw new CorruptEntryError({ file, line: lineNumber, reason, cause });
      }
      return check(value, file, lineNumber);
    },
    check,
  };
}
