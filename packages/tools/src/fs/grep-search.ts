import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { type FsToolContext, readSmallFileChecked, shownPath } from "./scoped-path.js";
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
 * Every file is opened through `readSmallFileChecked` (no symlink followed, the real path verified), so a
 * tree changed during the search never leaks a file outside the scope.
 */
export async function searchFiles(ctx: FsToolContext, root: string, query: GrepQuery): Promise<GrepResult> {
  const out = new BoundedLines(ctx.outputBudget?.("grep"));
  const result: GrepResult = { text: "", matches: 0, files: 0, limited: false, truncated: false };
  // A whole-file prefilter: most files have no match, and one regex run over the buffer is far
  // cheaper than splitting it into lines.
  const anywhere = new RegExp(query.regex.source, `${query.regex.flags}m`);

  const scratch = { buffer: Buffer.allocUnsafe(64 * 1024) };
  const searchOne = (file: WalkedFile): OutputLine[] | undefined => {
    // Vanished, swapped for a symlink, too big or unreadable: skipped, never followed.
    const bytes = readSmallFileChecked(file.path, MAX_FILE_BYTES, scratch);
    if (bytes === undefined || looksBinary(bytes)) return undefined;
    const text = bytes.toString("utf8");
    if (!anywhere.test(text)) return undefined;
    return formatMatches(shownPath(ctx, file.path), text, query);
  };

  // Files are read synchronously in slices of at most SLICE_MS, with a yield to the event loop
  // after each, so a large search neither stalls other work nor ignores an abort for long.
  const isDirectory = (await stat(root)).isDirectory();
  const batches = isDirectory
    ? walkTree(root, {
        scope: ctx.scope,
        stopAt: ctx.workspace,
        ...(query.signal ? { signal: query.signal } : {}),
      })
    : single(root);
  let sliceStart = performance.now();
  search: for await (const files of batches) {
    for (const file of files) {
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        query.signal?.throwIfAborted();
        sliceStart = performance.now();
      }
      if (query.include && !query.include(file.rel)) continue;
      const lines = searchOne(file);
      if (!lines) continue;
      result.files++;
      for (const line of lines) {
        if (line.match && result.matches >= query.limit) {
          result.limited = true;
          break search;
        }
        if (!out.push(line.text)) {
          result.truncated = true;
          break search;
        }
        if (line.match) result.matches++;
      }
    }
  }
  result.text = out.text();
  return result;
}

async function* single(path: string): AsyncGenerator<WalkedFile[]> {
  yield [{ path, rel: basename(path) }];
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
