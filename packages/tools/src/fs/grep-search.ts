import { closeSync } from "node:fs";
import { stat } from "node:fs/promises";
import {
  CheckedDirectory,
  errnoCode,
  openFileChecked,
  PathChangedError,
  PathNotVerifiableError,
  type Scratch,
  type SkipReason,
} from "./checked-open.js";
import { type FileOutcome, Pace, searchOpenFile } from "./grep-file.js";
import type { LineMatcher } from "./line-matcher.js";
import { type LineSink, MatchLines } from "./match-lines.js";
import { type FsToolContext, shownPath } from "./scoped-path.js";
import { SkippedPaths } from "./skipped-paths.js";
import { BoundedLines } from "./text.js";
import { walkTree } from "./walk-tree.js";

/** What `searchFiles` looks for. */
export interface GrepQuery {
  matcher: LineMatcher;
  /** Paths (relative to the search root) a file must match; undefined = every file. */
  include: ((rel: string) => boolean) | undefined;
  context: number;
  /** Most matching lines reported. */
  limit: number;
  signal?: AbortSignal;
}

/** Matches found, already formatted within the output budget. */
export interface GrepResult {
  text: string;
  matches: number;
  files: number;
  /** The match limit stopped the search. */
  limited: boolean;
  /** The byte budget cut the output. */
  truncated: boolean;
  /** Files and directories that could not be read. */
  skipped: SkippedPaths;
}

/**
 * Searches `root` (a canonical file or directory the scope lets the model read) line by line.
 * Files are opened without following a symlink, through a directory descriptor whose real path
 * was verified (`CheckedDirectory`), so a tree changed during the search never leaks a file
 * outside the scope. Throws only for an abort and for a root that cannot be read.
 *
 * The walk lists the next directories on the thread pool while this loop reads the current
 * one's files synchronously, in slices of at most 10 ms with a yield to the event loop between
 * them (`Pace`): an asynchronous open, read and close per file costs three thread-pool round
 * trips and measured three to five times the CPU of reading in place.
 */
export async function searchFiles(ctx: FsToolContext, root: string, query: GrepQuery): Promise<GrepResult> {
  const out = new BoundedLines(ctx.outputBudget?.("grep"));
  const result: GrepResult = {
    text: "",
    matches: 0,
    files: 0,
    limited: false,
    truncated: false,
    skipped: new SkippedPaths(),
  };
  const sink: LineSink = (line) => {
    if (line.match && result.matches >= query.limit) {
      result.limited = true;
      return false;
    }
    if (!out.push(line.text)) {
      result.truncated = true;
      return false;
    }
    if (line.match) result.matches++;
    return true;
  };
  const scratch: Scratch = { buffer: Buffer.allocUnsafe(64 * 1024) };
  const pace = new Pace(query.signal);
  /**
   * Searches one opened file and closes it; false once the output is full. Synchronous for a
   * small file, a promise only for a large one.
   */
  const searchFile = (fd: number, canonical: string, single: boolean): boolean | Promise<boolean> => {
    const shown = () => shownPath(ctx, canonical);
    const lines = new MatchLines(shown, query.matcher, query.context, sink);
    const settle = (outcome: FileOutcome): boolean => {
      if (lines.emitted > 0) result.files++;
      if (outcome === "stopped") return false;
      // One file the model named: a file it cannot read is an error, not a quiet "0 matches".
      if (single && outcome !== "searched" && outcome !== "binary") throw unreadable(outcome, shown());
      if (outcome !== "searched" && (single || outcome !== "binary")) result.skipped.add(outcome, shown());
      return true;
    };
    let pending: FileOutcome | Promise<FileOutcome>;
    try {
      pending = searchOpenFile(fd, query.matcher, lines, scratch, pace);
    } catch (error) {
      closeSync(fd);
      return settle(errnoCode(error));
    }
    if (typeof pending === "string") {
      closeSync(fd);
      return settle(pending);
    }
    return pending.then(
      (outcome) => {
        closeSync(fd);
        return settle(outcome);
      },
      (error: unknown) => {
        closeSync(fd);
        if (query.signal?.aborted) throw error;
        return settle(errnoCode(error));
      },
    );
  };

  if (!(await stat(root)).isDirectory()) {
    const fd = openFileChecked(root);
    if (typeof fd === "string") throw unreadable(fd, shownPath(ctx, root));
    await searchFile(fd, root, true);
    result.text = out.text();
    return result;
  }
  const walk = walkTree(root, {
    scope: ctx.scope,
    stopAt: ctx.workspace,
    ...(query.signal ? { signal: query.signal } : {}),
    onUnreadable: (dir, code) => result.skipped.add(code, shownPath(ctx, dir)),
  });
  search: for await (const { dir, files } of walk) {
    const directory = CheckedDirectory.open(dir);
    if (typeof directory === "string") {
      // Changed since it was listed: skipped, never followed.
      result.skipped.add(directory, shownPath(ctx, dir));
      continue;
    }
    try {
      for (const file of files) {
        if (pace.due()) await pace.yield();
        if (query.include && !query.include(file.rel)) continue;
        const fd = directory.openFile(file.path.slice(dir.length + 1));
        if (typeof fd === "string") result.skipped.add(fd, shownPath(ctx, file.path));
        else {
          const more = searchFile(fd, file.path, false);
          if (!(typeof more === "boolean" ? more : await more)) break search;
        }
      }
    } finally {
      directory.close();
    }
  }
  result.text = out.text();
  return result;
}

/** The error for the one file a search was asked to read, as the fs error it stands for. */
function unreadable(reason: SkipReason, shown: string): Error {
  if (reason === "changed") return new PathChangedError(shown);
  if (reason === "unverifiable") return new PathNotVerifiableError(shown);
  const code = reason === "too-big" ? "EFBIG" : reason === "not-regular" ? "ENXIO" : reason;
  return Object.assign(new Error(`cannot read "${shown}": ${code}`), { code });
}
