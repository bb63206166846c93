import { stat } from "node:fs/promises";
import {
  CheckedDirectory,
  PathChangedError,
  PathNotVerifiableError,
  readSmallFileChecked,
  type Scratch,
  type SkipReason,
} from "./checked-open.js";
import { formatMatches, type LineMatcher, type OutputLine } from "./grep-match.js";
import { type FsToolContext, shownPath } from "./scoped-path.js";
import { SkippedPaths } from "./skipped-paths.js";
import { BoundedLines, MAX_FILE_BYTES } from "./text.js";
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

/** Longest stretch of synchronous reading before the search yields to the event loop. */
const SLICE_MS = 10;

/**
 * Searches `root` (a canonical file or directory the scope lets the model read) line by line.
 * Files are opened without following a symlink, through a directory descriptor whose real path
 * was verified (`CheckedDirectory`), so a tree changed during the search never leaks a file
 * outside the scope. Throws only for an abort and for a root that cannot be `stat`ed.
 *
 * The walk lists the next directories on the thread pool while this loop reads the current
 * one's files synchronously, in slices of at most `SLICE_MS` with a yield to the event loop
 * between them: an asynchronous open, read and close per file costs three thread-pool round
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
  const scratch: Scratch = { buffer: Buffer.allocUnsafe(64 * 1024) };
  const collect = (canonical: string, read: Buffer | string): boolean => {
    if (typeof read === "string") {
      if (read !== "binary") result.skipped.add(read, shownPath(ctx, canonical));
      return true;
    }
    const text = query.matcher.candidate(read);
    if (text === undefined) return true;
    return collectLines(
      result,
      out,
      query,
      formatMatches(shownPath(ctx, canonical), text, query.matcher, query.context),
    );
  };

  if (!(await stat(root)).isDirectory()) {
    // One file the model named: a file it cannot read is an error, not a quiet "0 matches".
    const read = readSmallFileChecked(root, MAX_FILE_BYTES, scratch);
    if (typeof read === "string" && read !== "binary") throw unreadable(read, shownPath(ctx, root));
    if (read === "binary") result.skipped.add(read, shownPath(ctx, root));
    else collect(root, read);
    result.text = out.text();
    return result;
  }
  const walk = walkTree(root, {
    scope: ctx.scope,
    stopAt: ctx.workspace,
    ...(query.signal ? { signal: query.signal } : {}),
    onUnreadable: (dir, code) => result.skipped.add(code, shownPath(ctx, dir)),
  });
  let sliceStart = performance.now();
  search: for await (const { dir, files } of walk) {
    const directory = CheckedDirectory.open(dir);
    if (typeof directory === "string") {
      // Changed since it was listed: skipped, never followed.
      result.skipped.add(directory, shownPath(ctx, dir));
      continue;
    }
    try {
      for (const file of files) {
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          query.signal?.throwIfAborted();
          sliceStart = performance.now();
        }
        if (query.include && !query.include(file.rel)) continue;
        const name = file.path.slice(dir.length + 1);
        if (!collect(file.path, directory.readText(name, MAX_FILE_BYTES, scratch))) break search;
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

/** Adds one file's lines to the output; false once the match limit or the budget stops the search. */
function collectLines(result: GrepResult, out: BoundedLines, query: GrepQuery, lines: OutputLine[]): boolean {
  if (lines.length === 0) return true;
  result.files++;
  for (const line of lines) {
    if (line.match && result.matches >= query.limit) {
      result.limited = true;
      return false;
    }
    if (!out.push(line.text)) {
      result.truncated = true;
      return false;
    }
    if (line.match) result.matches++;
  }
  return true;
}
