import { isUtf8 } from "node:buffer";
import { open, realpath } from "node:fs/promises";
import { join, sep } from "node:path";

/** The most a memory file may hold (1 MiB); a larger one is refused, not read. */
export const MEMORY_FILE_MAX_BYTES = 1024 * 1024;

/** A memory file read, refused (with why and what to do), or absent. */
export type ContainedRead =
  | { ok: true; text: string; invalidUtf8?: InvalidUtf8 }
  | { ok: false; problem: string }
  | undefined;

/** Where a file stops being UTF-8: the line of the first byte that is not. */
export interface InvalidUtf8 {
  readonly line: number;
}

/**
 * Decodes UTF-8, noting the line of the first invalid byte sequence (the text then holds U+FFFD
 * there): a memory file is UTF-8 text, and a file that is not must be reported, not silently
 * altered. A byte order mark is kept in the text (the record parser notes it).
 */
export function decodeUtf8(bytes: Buffer): { text: string; invalidUtf8?: InvalidUtf8 } {
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  if (isUtf8(bytes)) return { text };
  // Valid sequences round-trip byte for byte: the first difference is the first invalid byte.
  const again = Buffer.from(text, "utf8");
  let at = 0;
  while (at < bytes.length && bytes[at] === again[at]) at += 1;
  let line = 1;
  for (let i = bytes.indexOf(10); i !== -1 && i < at; i = bytes.indexOf(10, i + 1)) line += 1;
  return { text, invalidUtf8: { line } };
}

/**
 * `<workspace>/.podkit` as it must resolve: inside the workspace's real path. Memory files are
 * read only when their real path is under it — a cloned repository can ship `.podkit`, a memory
 * directory or a record as a symbolic link to anywhere on the machine.
 */
export async function podkitRoot(workspace: string): Promise<string> {
  const real = await realpath(workspace).catch(() => workspace);
  return join(real, ".podkit");
}

/** Whether `realFile` (a resolved path) lies under `root`. */
export const isInside = (realFile: string, root: string) => realFile.startsWith(root + sep);

/**
 * Reads a memory file only when it resolves inside `root` (see `podkitRoot`) and holds at most
 * `maxBytes`; `label` is the workspace-relative path used in the refusal.
 */
export async function readContained(
  file: string,
  root: string,
  label: string,
  maxBytes = MEMORY_FILE_MAX_BYTES,
): Promise<ContainedRead> {
  let real: string;
  try {
    real = await realpath(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if (!isInside(real, root)) {
    return {
      ok: false,
      problem: `${label} resolves to ${real}, outside ${root}; memory files are read only inside .podkit — replace the symbolic link with the file itself`,
    };
  }
  return readCapped(real, label, maxBytes);
}

/** Reads `file` when it is a regular file of at most `maxBytes` (checked on the open handle, before reading). */
export async function readCapped(
  file: string,
  label: string,
  maxBytes = MEMORY_FILE_MAX_BYTES,
): Promise<ContainedRead> {
  const handle = await open(file, "r").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (handle === undefined) return undefined;
  try {
    const stats = await handle.stat();
    if (!stats.isFile())
      return { ok: false, problem: `${label} is not a regular file; records are plain .md files` };
    if (stats.size > maxBytes) {
      return {
        ok: false,
        problem: `${label} is ${stats.size} bytes, more than the ${maxBytes} a memory file may hold; shorten or split it`,
      };
    }
    return { ok: true, ...decodeUtf8(await handle.readFile()) };
  } finally {
    await handle.close();
  }
}
