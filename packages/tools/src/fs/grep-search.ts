import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { CheckedDirectory, type FsToolContext, readSmallFileChecked, shownPath } from "./scoped-path.js";
import { BoundedLines, cutLine, looksBinary, MAX_FILE_BYTES, splitLines } from "./text.js";
import { type WalkedFile, walkTree } from "./walk-tree.js";

/** What `searchFiles` looks for. */
export interface GrepQuery {
  regex: RegExp;
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
}

/** Longest stretch of synchronous reading before the search yields to the event loop. */
const SLICE_MS = 10;
const MAX_SHOWN_LINE = 300;

/**
 * Searches `root` (a canonical file or directory the scope lets the model read) line by line.
 * Files are opened without following a symlink, through a directory descriptor whose real path
 * was verified (`CheckedDirectory`), so a tree changed during the search never leaks a file
 * outside the scope.
 */
export async function searchFiles(ctx: FsToolContext, root: string, query: GrepQuery): Promise<GrepResult> {
  const out = new BoundedLines(ctx.outputBudget?.("grep"));
  const result: GrepResult = { text: "", matches: 0, files: 0, limited: false, truncated: false };
  // A whole-file prefilter: most files have no match, and one regex run over the buffer is far
  // cheaper than splitting it into lines.
  const anywhere = new RegExp(query.regex.source, `${query.regex.flags}m`);

  const scratch = { buffer: Buffer.allocUnsafe(64 * 1024) };
  const searchOne = (file: WalkedFile, bytes: Buffer | undefined): OutputLine[] | undefined => {
    // Vanished, swapped for a symlink, too big or unreadable: skipped, never followed.
    if (bytes === undefined || looksBinary(bytes)) return undefined;
    const text = bytes.toString("utf8");
    if (!anywhere.test(text)) return undefined;
    return formatMatches(shownPath(ctx, file.path), text, query);
  };

  // A single file is read on its own; a tree comes one directory per batch, read through that
  // directory's verified descriptor. Files are read synchronously in slices of at most SLICE_MS
  // with a yield to the event loop after each, so a large search neither stalls other work nor
  // ignores an abort for long.
  if (!(await stat(root)).isDirectory()) {
    const file = { path: root, rel: basename(root) };
    collect(result, out, query, searchOne(file, readSmallFileChecked(root, MAX_FILE_BYTES, scratch)));
    result.text = out.text();
    return result;
  }
  const batches = walkTree(root, {
    scope: ctx.scope,
    stopAt: ctx.workspace,
    ...(query.signal ? { signal: query.signal } : {}),
  });
  let sliceStart = performance.now();
  search: for await (const files of batches) {
    const first = files[0] as WalkedFile;
    const directory = CheckedDirectory.open(first.path.slice(0, first.path.lastIndexOf("/")));
    if (!directory) continue; // the directory changed since it was listed: skipped, never followed
    try {
      for (const file of files) {
        if (performance.now() - sliceStart > SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          query.signal?.throwIfAborted();
          sliceStart = performance.now();
        }
        if (query.include && !query.include(file.rel)) continue;
        const name = file.path.slice(file.path.lastIndexOf("/") + 1);
        const lines = searchOne(file, directory.read(name, MAX_FILE_BYTES, scratch));
        if (!collect(result, out, query, lines)) break search;
      }
    } finally {
      directory.close();
    }
  }
  result.text = out.text();
  return result;
}

/** Adds one file's lines to the output; false once the match limit or the budget stops the search. */
function collect(
  result: GrepResult,
  out: BoundedLines,
  query: GrepQuery,
  lines: OutputLine[] | undefined,
): boolean {
  if (!lines) return true;
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

interface OutputLine {
  text: string;
  /** A matching line (not context or a separator); the limit counts these. */
  match: boolean;
}

/** rg/grep style: `path:line:text` for matches, `path-line-text` for context, `--` between groups. */
function formatMatches(shown: string, text: string, query: GrepQuery): OutputLine[] {
  const lines = splitLines(text);
  const out: OutputLine[] = [];
  const context = (j: number) => ({
    text: `${shown}-${j + 1}-${cutLine(lines[j] as string, MAX_SHOWN_LINE)}`,
    match: false,
  });
  let lastPrinted = -1;
  for (let i = 0; i < lines.length; i++) {
    if (!query.regex.test(lines[i] as string)) continue;
    const from = Math.max(0, i - query.context, lastPrinted + 1);
    if (query.context > 0 && lastPrinted >= 0 && from > lastPrinted + 1)
      out.push({ text: "--", match: false });
    for (let j = from; j < i; j++) out.push(context(j));
    out.push({ text: `${shown}:${i + 1}:${cutLine(lines[i] as string, MAX_SHOWN_LINE)}`, match: true });
    lastPrinted = i;
    const to = Math.min(lines.length - 1, i + query.context);
    for (let j = i + 1; j <= to && !query.regex.test(lines[j] as string); j++) {
      out.push(context(j));
      lastPrinted = j;
    }
  }
  return out;
}
