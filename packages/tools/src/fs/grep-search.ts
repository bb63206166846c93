import { constants } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { type FsToolContext, openChecked, shownPath } from "./scoped-path.js";
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

/** Files read at once: enough to keep the thread pool busy without opening thousands of files. */
const BATCH = 64;
const MAX_SHOWN_LINE = 300;

/**
 * Searches `root` (a canonical file or directory the scope lets the model read) line by line.
 * Every file is opened through `openChecked` (no symlink followed, the real path verified), so a
 * tree changed during the search never leaks a file outside the scope.
 */
export async function searchFiles(ctx: FsToolContext, root: string, query: GrepQuery): Promise<GrepResult> {
  const out = new BoundedLines();
  const result: GrepResult = { text: "", matches: 0, files: 0, limited: false, truncated: false };
  // A whole-file prefilter: most files have no match, and one regex run over the buffer is far
  // cheaper than splitting it into lines.
  const anywhere = new RegExp(query.regex.source, `${query.regex.flags}m`);

  const searchOne = async (file: WalkedFile): Promise<OutputLine[] | undefined> => {
    let text: string;
    try {
      const handle = await openChecked(file.path, constants.O_RDONLY, file.rel);
      try {
        const bytes = await handle.readFile();
        if (bytes.length > MAX_FILE_BYTES || looksBinary(bytes)) return undefined;
        text = bytes.toString("utf8");
      } finally {
        await handle.close();
      }
    } catch {
      return undefined; // vanished, swapped for a symlink, or unreadable: skipped, never followed
    }
    if (!anywhere.test(text)) return undefined;
    return formatMatches(shownPath(ctx, file.path), text, query);
  };

  const files = (await stat(root)).isDirectory()
    ? walkTree(root, {
        scope: ctx.scope,
        stopAt: ctx.workspace,
        ...(query.signal ? { signal: query.signal } : {}),
      })
    : single(root);
  let batch: WalkedFile[] = [];
  const flush = async (): Promise<boolean> => {
    const found = await Promise.all(batch.map(searchOne));
    batch = [];
    for (const lines of found) {
      if (!lines) continue;
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
    }
    return true;
  };
  for await (const file of files) {
    query.signal?.throwIfAborted();
    if (query.include && !query.include(file.rel)) continue;
    batch.push(file);
    if (batch.length >= BATCH && !(await flush())) break;
  }
  if (batch.length > 0) await flush();
  result.text = out.text();
  return result;
}

async function* single(path: string): AsyncGenerator<WalkedFile> {
  yield { path, rel: basename(path) };
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
