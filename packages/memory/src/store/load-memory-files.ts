import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { MemoryFile } from "../lint/lint-record.js";
import { kindDir, type MemoryPaths, type RecordKind, recordLabel, SUMMARY_SLUG } from "../records/layout.js";
import { FILE_BATCH, mapInBatches } from "./loop-yield.js";

async function entriesOf(dir: string) {
  return readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return [];
    throw error;
  });
}

const label = (paths: MemoryPaths, file: string) => relative(paths.workspace, file).split(sep).join("/");

/** Reads a directory's record files in name order; temp and hidden files are skipped. */
async function readKind(paths: MemoryPaths, kind: RecordKind, out: MemoryFile[]): Promise<void> {
  const dir = kindDir(paths, kind);
  const entries = (await entriesOf(dir))
    .filter((e) => !e.name.startsWith("."))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const texts = await mapInBatches(entries, FILE_BATCH, (e) =>
    e.isFile() ? readFile(join(dir, e.name), "utf8") : Promise.resolve(undefined),
  );
  entries.forEach((entry, i) => {
    const file = join(dir, entry.name);
    const text = texts[i];
    if (text === undefined || !entry.name.endsWith(".md")) {
      out.push({ kind: undefined, slug: entry.name, text: text ?? "", path: label(paths, file) });
    } else {
      const slug = entry.name.slice(0, -3);
      out.push({ kind, slug, text, path: recordLabel(kind, slug) });
    }
  });
}

/**
 * Every file of the memory trees as the linter sees it: decisions, requests, knowledge, the
 * summary, and — with no kind, so the linter reports its location — any other file found where
 * records live (a `.md` next to `summary.md`, a non-`.md` file among decisions).
 */
export async function loadMemoryFiles(paths: MemoryPaths): Promise<MemoryFile[]> {
  const out: MemoryFile[] = [];
  for (const kind of ["decision", "request", "knowledge"] as const) await readKind(paths, kind, out);
  for (const entry of await entriesOf(paths.memoryDir)) {
    if (entry.name.startsWith(".") || entry.name.startsWith("_") || entry.isDirectory()) continue;
    const file = join(paths.memoryDir, entry.name);
    const text = await readFile(file, "utf8").catch(() => "");
    if (entry.name === `${SUMMARY_SLUG}.md`)
      out.push({ kind: "summary", slug: SUMMARY_SLUG, text, path: recordLabel("summary", SUMMARY_SLUG) });
    else out.push({ kind: undefined, slug: entry.name, text, path: label(paths, file) });
  }
  return out;
}
