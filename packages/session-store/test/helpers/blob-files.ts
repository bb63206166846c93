import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Where FsStore keeps blob `digest` under `root` (docs/session-store.md, "Blobs"). */
export function blobPath(root: string, digest: string): string {
  const hex = digest.slice("sha256:".length);
  return join(root, ".blobs", "sha256", hex.slice(0, 2), hex.slice(2));
}

/** What lies in the blob directories of `root`, read behind the store's back. */
export async function blobFiles(root: string): Promise<{
  /** Files named by a digest whose bytes hash to it. */
  whole: string[];
  /** Files named by a digest whose bytes do not hash to it: partial or damaged blobs. */
  broken: string[];
  /** Every other name (temp files, blobs set aside). */
  other: string[];
}> {
  const whole: string[] = [];
  const broken: string[] = [];
  const other: string[] = [];
  const dir = join(root, ".blobs", "sha256");
  const shards = await readdir(dir).catch(() => [] as string[]);
  for (const shard of shards) {
    for (const name of await readdir(join(dir, shard))) {
      if (!/^[0-9a-f]{62}$/.test(name)) {
        other.push(name);
        continue;
      }
      const digest = `sha256:${shard}${name}`;
      const bytes = await readFile(join(dir, shard, name));
      const actual = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      (actual === digest ? whole : broken).push(digest);
    }
  }
  return { whole, broken, other };
}
