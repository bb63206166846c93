import { FORMAT_VERSION } from "./entry/entry-schema.js";
import type { ErrorKind } from "./error-kinds.js";

const BASE_MARKER = Symbol.for("podkit.session-store.error");

/** True when `value` carries `marker` (every error class of this package has its own). */
export function hasMarker(value: unknown, marker: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Base class of every error thrown by `@podkit/session-store`. `isInstance` works across
 * duplicated copies of the package because it checks a `Symbol.for` marker, not the prototype.
 */
export class SessionStoreError extends Error {
  readonly [BASE_MARKER] = true;
  /** What the user can do about it, one line; the CLI prints it after the message. */
  readonly hint: string | undefined;
  /**
   * How a caller treats it (docs/errors.md, "Kinds"). Each class sets its own; a store throws a
   * bare `SessionStoreError` when another writer changed the session under it, so `conflict`
   * unless the thrower says otherwise.
   */
  readonly errorKind: ErrorKind;

  constructor(message: string, options?: { cause?: unknown; hint?: string; errorKind?: ErrorKind }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SessionStoreError";
    this.hint = options?.hint;
    this.errorKind = options?.errorKind ?? "conflict";
  }

  /** True for any session-store error, whichever copy of the package created it. */
  static isInstance(value: unknown): value is SessionStoreError {
    return hasMarker(value, BASE_MARKER);
  }
}

const CORRUPT_MARKER = Symbol.for("podkit.session-store.error.corrupt-entry");

/**
 * A newline-terminated line of a segment file that is not a valid entry. Committed lines are
 * never skipped: a corrupt one stops the read so nobody restores a silently shortened history.
 */
export class CorruptEntryError extends SessionStoreError {
  readonly [CORRUPT_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  readonly file: string;
  /** 1-based line number inside `file`. */
  readonly line: number;
  readonly reason: string;

  constructor(args: { file: string; line: number; reason: string; cause?: unknown }) {
    super(
      `${args.file}:${args.line}: corrupt session log entry: ${args.reason}. ` +
        "The line is committed (newline-terminated) so it was not skipped; inspect or restore the file from a backup.",
      {
        cause: args.cause,
        hint: "the lines before it are intact: `podkit session fork <session> --at-turn <n>` continues from a turn before it",
      },
    );
    this.name = "CorruptEntryError";
    this.file = args.file;
    this.line = args.line;
    this.reason = args.reason;
  }

  static override isInstance(value: unknown): value is CorruptEntryError {
    return hasMarker(value, CORRUPT_MARKER);
  }
}

const FORMAT_MARKER = Symbol.for("podkit.session-store.error.unsupported-format");

/**
 * A log written by a newer podkit: a segment whose format version this package does not know, or
 * an intact line (its frame verified) of a known version whose entry `kind` this package does
 * not know. Never `CorruptEntryError`: nothing is damaged, this podkit is too old to read it.
 */
export class UnsupportedFormatError extends SessionStoreError {
  readonly [FORMAT_MARKER] = true;
  override readonly errorKind: ErrorKind = "unsupported";
  readonly file: string;
  readonly line: number;
  /** The segment's `v` this package does not read; undefined when the entry kind is what it lacks. */
  readonly version: unknown;
  /** The entry kind this package does not know; undefined when the segment's version is what it lacks. */
  readonly kind: string | undefined;

  constructor(args: { file: string; line: number; version?: unknown; kind?: string }) {
    const newest = FORMAT_VERSION;
    const what =
      args.kind === undefined
        ? `written by a newer podkit (format ${JSON.stringify(args.version)}); this @podkit/session-store reads formats 1 to ${newest}`
        : `written by a newer podkit: entry kind ${JSON.stringify(args.kind)} is not in format ${newest}, the newest this @podkit/session-store reads`;
    super(`${args.file}:${args.line}: this session log was ${what}. Upgrade podkit to read it.`, {
      hint: "this log was written by a newer podkit; upgrade @podkit/cli (or the podkit packages of your application) to read it",
    });
    this.name = "UnsupportedFormatError";
    this.file = args.file;
    this.line = args.line;
    this.version = args.version;
    this.kind = args.kind;
  }

  static override isInstance(value: unknown): value is UnsupportedFormatError {
    return hasMarker(value, FORMAT_MARKER);
  }
}

const INVALID_ENTRY_MARKER = Symbol.for("podkit.session-store.error.invalid-entry");

/**
 * An entry handed to the writer that does not match the entry schema; nothing was written. The
 * writers are podkit's own (the pod, the dispatcher): an entry they build wrongly is a bug.
 */
export class InvalidEntryError extends SessionStoreError {
  readonly [INVALID_ENTRY_MARKER] = true;
  override readonly errorKind: ErrorKind = "internal";
  readonly kind: unknown;
  readonly issues: string;

  constructor(args: { kind: unknown; issues: string }) {
    super(`refusing to write an invalid "${String(args.kind)}" entry: ${args.issues}. Nothing was written.`);
    this.name = "InvalidEntryError";
    this.kind = args.kind;
    this.issues = args.issues;
  }

  static override isInstance(value: unknown): value is InvalidEntryError {
    return hasMarker(value, INVALID_ENTRY_MARKER);
  }
}

const APPEND_MARKER = Symbol.for("podkit.session-store.error.append-failed");

/** A write to a segment failed; the file was rolled back to its length before the write. */
export class AppendFailedError extends SessionStoreError {
  readonly [APPEND_MARKER] = true;
  /** A full disk, an I/O error: nothing was written, and the same append may work later. */
  override readonly errorKind: ErrorKind = "transient";
  readonly file: string;

  constructor(args: { file: string; detail: string; cause?: unknown }) {
    super(`${args.file}: append failed (${args.detail}); the file was rolled back to its previous length.`, {
      cause: args.cause,
    });
    this.name = "AppendFailedError";
    this.file = args.file;
  }

  static override isInstance(value: unknown): value is AppendFailedError {
    return hasMarker(value, APPEND_MARKER);
  }
}

const LOCK_MARKER = Symbol.for("podkit.session-store.error.lock-timeout");

/** The append lock of a segment stayed held by a live process for longer than the wait bound. */
export class LockTimeoutError extends SessionStoreError {
  readonly [LOCK_MARKER] = true;
  /** Another process holds the session: busy, not broken. */
  override readonly errorKind: ErrorKind = "conflict";
  readonly lockFile: string;
  readonly holderPid: number | undefined;
  readonly waitedMs: number;

  constructor(args: { lockFile: string; holderPid: number | undefined; waitedMs: number }) {
    const holder = args.holderPid === undefined ? "an unknown process" : `process ${args.holderPid}`;
    super(
      `${args.lockFile}: segment is locked by ${holder}; gave up after ${args.waitedMs} ms. ` +
        `If no podkit process is writing this session, delete the lock file and retry.`,
      {
        hint: "another podkit process is writing this session; wait for it to finish (or end it) and run again",
      },
    );
    this.name = "LockTimeoutError";
    this.lockFile = args.lockFile;
    this.holderPid = args.holderPid;
    this.waitedMs = args.waitedMs;
  }

  static override isInstance(value: unknown): value is LockTimeoutError {
    return hasMarker(value, LOCK_MARKER);
  }
}

const NOT_FOUND_MARKER = Symbol.for("podkit.session-store.error.not-found");

/** A session, segment or blob that does not exist in the store. */
export class NotFoundError extends SessionStoreError {
  readonly [NOT_FOUND_MARKER] = true;
  override readonly errorKind: ErrorKind = "not_found";
  readonly what: "session" | "segment" | "blob";
  readonly id: string;

  constructor(args: { what: "session" | "segment" | "blob"; id: string; where: string }) {
    super(`${args.what} ${args.id} not found in ${args.where}`, {
      hint:
        args.what === "blob"
          ? "`podkit store gc` removes only blobs no session names; was the store copied or restored without its blobs?"
          : "`podkit session list` shows this workspace's sessions",
    });
    this.name = "NotFoundError";
    this.what = args.what;
    this.id = args.id;
  }

  static override isInstance(value: unknown): value is NotFoundError {
    return hasMarker(value, NOT_FOUND_MARKER);
  }
}

const USAGE_MARKER = Symbol.for("podkit.session-store.error.usage");

/**
 * A call that cannot be honoured as asked: a malformed id, an unknown turn, a truncation
 * past the end, a replay that does not start with `segment_start`. The message says what to change.
 */
export class SessionStoreUsageError extends SessionStoreError {
  readonly [USAGE_MARKER] = true;
  override readonly errorKind: ErrorKind = "usage";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SessionStoreUsageError";
  }

  static override isInstance(value: unknown): value is SessionStoreUsageError {
    return hasMarker(value, USAGE_MARKER);
  }
}

const REPLAY_MARKER = Symbol.for("podkit.session-store.error.replay");

/**
 * A sequence of entries that is not a segment (no leading `segment_start`, or a second one): read
 * from a store, the segment is damaged.
 */
export class ReplayError extends SessionStoreError {
  readonly [REPLAY_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  /** 0-based index of the offending entry. */
  readonly entryIndex: number;

  constructor(args: { entryIndex: number; reason: string }) {
    super(`cannot replay entry ${args.entryIndex}: ${args.reason}`);
    this.name = "ReplayError";
    this.entryIndex = args.entryIndex;
  }

  static override isInstance(value: unknown): value is ReplayError {
    return hasMarker(value, REPLAY_MARKER);
  }
}

const BUSY_MARKER = Symbol.for("podkit.session-store.error.session-busy");

/**
 * A write that must not fork (it claims the session: the resume of a run awaiting approval, an
 * approval's answer) found that another writer had appended to the segment since this writer
 * read it. Nothing was written; reopen the session to see what the other writer did.
 */
export class SessionBusyError extends SessionStoreError {
  readonly [BUSY_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  readonly sessionId: string;
  readonly segmentId: string;

  constructor(args: { sessionId: string; segmentId: string; expectedCount: number; actualCount: number }) {
    super(
      `session ${args.sessionId} is busy: another writer appended to segment ${args.segmentId} ` +
        `(${args.actualCount} entries, this writer knew ${args.expectedCount}); nothing was written`,
      {
        hint: "another process is continuing this session; wait for it to finish, then restore the session again",
      },
    );
    this.name = "SessionBusyError";
    this.sessionId = args.sessionId;
    this.segmentId = args.segmentId;
  }

  static override isInstance(value: unknown): value is SessionBusyError {
    return hasMarker(value, BUSY_MARKER);
  }
}

const BLOB_CORRUPT_MARKER = Symbol.for("podkit.session-store.error.blob-corrupt");

/**
 * A stored blob whose bytes do not hash to its digest (changed outside podkit, or damaged on
 * disk), or a blob path that is not a plain file. Never handed out: a rewind restores nothing
 * from it.
 */
export class BlobCorruptError extends SessionStoreError {
  readonly [BLOB_CORRUPT_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  readonly digest: string;
  /** Where the blob is stored: its file, or `postgres:<schema>/blobs`. */
  readonly where: string;
  readonly reason: string;

  constructor(args: { digest: string; where: string; reason: string }) {
    super(`${args.where}: corrupt blob ${args.digest}: ${args.reason}. Its bytes were not handed out.`, {
      hint: "the stored copy of this content is damaged: restore the store's blobs from a backup",
    });
    this.name = "BlobCorruptError";
    this.digest = args.digest;
    this.where = args.where;
    this.reason = args.reason;
  }

  static override isInstance(value: unknown): value is BlobCorruptError {
    return hasMarker(value, BLOB_CORRUPT_MARKER);
  }
}
