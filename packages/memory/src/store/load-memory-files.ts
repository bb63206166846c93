import type { Dirent } from "node:fs";
import { readdir, realpath } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { MemoryFile } from "../lint/lint-record.js";
import {
  kindDir,
  type MemoryPaths,
  RECORD_KINDS,
  type RecordKind,
  recordLabel,
  SUMMARY_SLUG,
} from "../records/layout.js";
import { type ContainedRead, isInside, podkitRoot, readCapped, readContained } from "./contained-read.js";
import { FILE_BATCH, mapInBatches } from "./loop-yield.js";

async function entriesOf(dir: string) {
  return readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return [];
    throw error;
  });
}

const label = (paths: MemoryPaths, file: string) => relative(paths.workspace, file).split(sep).join("/");

/**
 * Reads the entries of one directory of the memory trees. A plain file in a directory that
 * resolves inside `.podkit` is read directly (size-capped); a symbolic link, or anything in a
 * directory that is itself linked out, is read only if it resolves inside `.podkit`. Refused and
 * oversized files come back as `problem` (not read); directories as `undefined`.
 */
async function readEntries(
  dir: string,
  entries: readonly Dirent[],
  root: string,
  labelOf: (entry: Dirent) => string,
): Promise<ContainedRead[]> {
  const realDir = await realpath(dir).catch(() => undefined);
  const dirInside = realDir !== undefined && isInside(realDir, root);
  return mapInBatches(entries, FILE_BATCH, async (entry) => {
    const file = join(dir, entry.name);
    if (entry.isDirectory()) return undefined;
    if (dirInside && entry.isFile()) return readCapped(file, labelOf(entry));
    return readContained(file, root, labelOf(entry));
  });
}

/** Reads a directory's record files in name order; temp and hidden files are skipped. */
async function readKind(
  paths: MemoryPaths,
  root: string,
  kind: RecordKind,
  out: MemoryFile[],
): Promise<void> {
  const dir = kindDir(paths, kind);
  const entries = (await entriesOf(dir))
    .filter((e) => !e.name.startsWith("."))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const isRecord = (e: Dirent) => !e.isDirectory() && e.name.endsWith(".md");
  const labelOf = (e: Dirent) =>
    isRecord(e) ? recordLabel(kind, e.name.slice(0, -3)) : label(paths, join(dir, e.name));
  const reads = await readEntries(dir, entries, root, labelOf);
  entries.forEach((entry, i) => {
    out.push(
      isRecord(entry)
        ? memoryFile(kind, entry.name.slice(0, -3), labelOf(entry), reads[i])
        : memoryFile(undefined, entry.name, labelOf(entry), reads[i]),
    );
  });
}

/** A file as the linter sees it, from what reading it gave. */
function memoryFile(
  kind: RecordKind | undefined,
  slug: string,
  path: string,
  read: ContainedRead,
): MemoryFile {
  if (read?.ok === false) return { kind, slug, text: "", path, problem: read.problem };
  const text = read?.ok === true ? read.text : "";
  const invalid = read?.ok === true ? read.invalidUtf8 : undefined;
  return { kind, slug, text, path, ...(invalid === undefined ? {} : { invalidUtf8Line: invalid.line }) };
}

/**
 * Every file of the memory trees as the linter sees it: decisions, requests, knowledge, the
 * summary, and — with no kind, so the linter reports its location — any other file found where
 * records live (a `.md` next to `summary.md`, a non-`.md` file among decisions). A file that
 * resolves outside `<workspace>/.podkit` (a symbolic link) or is larger than
 * `MEMORY_FILE_MAX_BYTES` is not read: it comes with a `problem` the linter reports.
 */
export async function loadMemoryFiles(
  paths: MemoryPaths,
  kinds: readonly RecordKind[] = RECORD_KINDS,
): Promise<MemoryFile[]> {
  const root = await podkitRoot(paths.workspace);
  const out: MemoryFile[] = [];
  for (const kind of ["decision", "request", "knowledge"] as const)
    if (kinds.includes(kind)) await readKind(paths, root, kind, out);
  if (!kinds.includes("summary")) return out;
  const entries = (await entriesOf(paths.memoryDir)).filter(
    (e) => !e.name.startsWith(".") && !e.name.startsWith("_") && !e.isDirectory(),
  );
  const isSummary = (e: Dirent) => e.name === `${SUMMARY_SLUG}.md`;
  const labelOf = (e: Dirent) =>
    isSummary(e) ? recordLabel("summary", SUMMARY_SLUG) : label(paths, join(paths.memoryDir, e.name));
  const reads = await readEntries(paths.memoryDir, entries, root, labelOf);
  entries.forEach((entry, i) => {
    out.push(
      isSummary(entry)
        ? memoryFile("summary", SUMMARY_SLUG, labelOf(entry), reads[i])
        : memoryFile(undefined, entry.name, labelOf(entry), reads[i]),
    );
  });
  return out;
}
