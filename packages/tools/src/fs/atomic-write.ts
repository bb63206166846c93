import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { openChecked } from "./checked-open.js";

/**
 * Replaces `canonical` with `data` atomically: the bytes go to a fresh temp file in the same
 * directory (created exclusively, never through a symlink, its real location verified), which is
 * then renamed over the target. A concurrent reader sees the old file or the new one, never a
 * half-written one. An existing file keeps its permission bits.
 */
export async function writeFileAtomic(canonical: string, data: string, shown: string): Promise<void> {
  const dir = dirname(canonical);
  await mkdir(dir, { recursive: true });
  const existing = await lstat(canonical).catch(() => undefined);
  if (existing && !existing.isFile() && !existing.isDirectory()) {
    // Renaming over a FIFO, socket or device would silently replace it: refused as open(2) would.
    throw Object.assign(new Error(`"${shown}" is not a regular file`), { code: "ENXIO" });
  }
  const mode = existing?.isFile() ? existing.mode & 0o7777 : 0o666;
  const temp = join(dir, `.${basename(canonical)}.${randomBytes(6).toString("hex")}.podkit-tmp`);
  const handle = await openChecked(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, shown, {
    mode,
  });
  try {
    try {
      await handle.writeFile(data, "utf8");
      if (existing?.isFile()) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    await rename(temp, canonical);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
