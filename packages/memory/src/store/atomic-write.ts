import { randomBytes } from "node:crypto";
import { mkdir, rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Replaces `file` with `data` atomically: a fresh temp file in the same directory (created
 * exclusively) is renamed over it, so a reader — or a crash — sees the old file or the new one,
 * never half of one.
 */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, data, { encoding: "utf8", flag: "wx" });
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
