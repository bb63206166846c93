import { ERROR_KINDS, type ErrorKind } from "@podkit/llm-worker";
import { hasMarker, PodkitPodError } from "../errors.js";

/** A file a rewind would overwrite although its content is not what the session last recorded. */
export interface RewindRefusal {
  /** Workspace-relative POSIX path. */
  path: string;
  /** The content the session last recorded for it (`null`: absent). */
  recorded: string | null;
  /** What is there now: a digest, `null` (absent), or what stands there instead of a file. */
  current: string | null | "symlink" | "directory" | "other";
}

const REFUSED_MARKER = Symbol.for("podkit.pod.error.rewind-refused");

/**
 * The rewind would overwrite files changed outside the pod: their current content is not the
 * last content the session recorded for them. Nothing was changed. `--force` (`force: true`)
 * overwrites them.
 */
export class RewindRefusedError extends PodkitPodError {
  readonly [REFUSED_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  override name = "RewindRefusedError";
  readonly sessionId: string;
  readonly refused: readonly RewindRefusal[];

  constructor(sessionId: string, refused: readonly RewindRefusal[]) {
    super(
      `cannot rewind session ${sessionId}: ${refused.length} file${refused.length === 1 ? "" : "s"} changed outside the pod since the session last wrote ${refused.length === 1 ? "it" : "them"}; nothing was changed\n${refused.map((refusal) => `  ${refusal.path}${describeCurrent(refusal.current)}`).join("\n")}`,
      {
        hint:
          refused.length === 1
            ? "rerun with --force to overwrite it (its current content is lost), or save that edit elsewhere first"
            : "rerun with --force to overwrite them (their current contents are lost), or save those edits elsewhere first",
      },
    );
    this.sessionId = sessionId;
    this.refused = refused;
  }

  static override isInstance(error: unknown): error is RewindRefusedError {
    return hasMarker(error, REFUSED_MARKER);
  }
}

function describeCurrent(current: RewindRefusal["current"]): string {
  if (current === null) return " (deleted)";
  if (current === "symlink") return " (now a symbolic link)";
  if (current === "directory") return " (now a directory)";
  if (current === "other") return " (not a regular file)";
  return "";
}

const INVALID_CHANGE_MARKER = Symbol.for("podkit.pod.error.invalid-file-change");

/**
 * A file-change entry of the session log cannot be used: its payload is not one, or it names a
 * path that is not a plain workspace-relative path (absolute, `..`, empty parts) or that lies in
 * the session store or the rewind's journal. The log is untrusted: such a path is never opened.
 * Nothing was changed.
 */
export class InvalidFileChangeError extends PodkitPodError {
  readonly [INVALID_CHANGE_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  override name = "InvalidFileChangeError";
  /** The segment holding the entry, and the entry's index in it. */
  readonly segmentId: string;
  readonly index: number;
  readonly reason: string;

  constructor(args: { segmentId: string; index: number; reason: string }) {
    super(
      `segment ${args.segmentId}, entry ${args.index}: unusable file-change record: ${args.reason}; a rewind never touches such a path, and nothing was changed`,
      {
        hint: "the session log was damaged or written by something other than podkit; `podkit session show <session>` shows its turns",
      },
    );
    this.segmentId = args.segmentId;
    this.index = args.index;
    this.reason = args.reason;
  }

  static override isInstance(error: unknown): error is InvalidFileChangeError {
    return hasMarker(error, INVALID_CHANGE_MARKER);
  }
}

const BLOCKED_MARKER = Symbol.for("podkit.pod.error.rewind-path-blocked");

/**
 * A file the rewind must restore cannot be reached without following a symbolic link, or sits
 * where a directory now stands (or below a file): the workspace's shape changed. Nothing was changed.
 */
export class RewindPathBlockedError extends PodkitPodError {
  readonly [BLOCKED_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  override name = "RewindPathBlockedError";
  readonly path: string;

  constructor(path: string, reason: string) {
    super(`cannot rewind ${path}: ${reason}; nothing was changed`, {
      hint: "a rewind never follows a symbolic link and never removes a directory that holds files: move what stands there away, then rerun",
    });
    this.path = path;
  }

  static override isInstance(error: unknown): error is RewindPathBlockedError {
    return hasMarker(error, BLOCKED_MARKER);
  }
}

const PENDING_MARKER = Symbol.for("podkit.pod.error.rewind-pending");

/**
 * A rewind of the session left its journal in the workspace: it is running in another process
 * (`running`), or it was interrupted and a dry run must not finish it.
 */
export class RewindPendingError extends PodkitPodError {
  readonly [PENDING_MARKER] = true;
  override readonly errorKind: ErrorKind = "conflict";
  override name = "RewindPendingError";
  readonly journal: string;
  readonly running: boolean;

  constructor(args: { sessionId: string; journal: string; running: boolean; pid?: number }) {
    super(
      args.running
        ? `a rewind of session ${args.sessionId} is running (process ${args.pid}, journal ${args.journal})`
        : `a rewind of session ${args.sessionId} was interrupted (journal ${args.journal})`,
      {
        hint: args.running
          ? "wait for it to finish, then try again"
          : "run the rewind without --dry-run: it finishes or undoes the interrupted one first",
      },
    );
    this.journal = args.journal;
    this.running = args.running;
  }

  static override isInstance(error: unknown): error is RewindPendingError {
    return hasMarker(error, PENDING_MARKER);
  }
}

const JOURNAL_MARKER = Symbol.for("podkit.pod.error.rewind-journal");

/** The journal an interrupted rewind left cannot be read: it was changed or damaged outside podkit. */
export class RewindJournalError extends PodkitPodError {
  readonly [JOURNAL_MARKER] = true;
  override readonly errorKind: ErrorKind = "corrupt";
  override name = "RewindJournalError";
  readonly journal: string;

  constructor(journal: string, reason: string, options?: { cause?: unknown }) {
    super(`${journal}: cannot read the journal of an interrupted rewind: ${reason}`, {
      hint: "podkit writes it whole or not at all, so it was changed by hand: restore it, or move it away and check the workspace's files with `git status`",
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
    });
    this.journal = journal;
  }

  static override isInstance(error: unknown): error is RewindJournalError {
    return hasMarker(error, JOURNAL_MARKER);
  }
}

const BLOB_MARKER = Symbol.for("podkit.pod.error.rewind-blob");

/**
 * A content the rewind needs is not in the session store's blobs, or is damaged there. Its kind
 * is its cause's (`not_found`, `corrupt`, `transient`). Nothing was changed.
 */
export class RewindBlobError extends PodkitPodError {
  readonly [BLOB_MARKER] = true;
  override readonly errorKind: ErrorKind;
  override name = "RewindBlobError";
  readonly path: string;
  readonly digest: string;

  constructor(args: { path: string; digest: string; cause: unknown }) {
    const cause = args.cause as { message?: unknown; hint?: unknown; errorKind?: unknown };
    super(
      `cannot rewind ${args.path}: its content ${args.digest} cannot be read from the session store: ${String(cause?.message ?? args.cause)}`,
      {
        cause: args.cause,
        hint:
          typeof cause?.hint === "string"
            ? cause.hint
            : "check that the store the manifest selects is the one the session was recorded in",
      },
    );
    const kind = cause?.errorKind as ErrorKind;
    this.errorKind = ERROR_KINDS.includes(kind) ? kind : "not_found";
    this.path = args.path;
    this.digest = args.digest;
  }

  static override isInstance(error: unknown): error is RewindBlobError {
    return hasMarker(error, BLOB_MARKER);
  }
}
