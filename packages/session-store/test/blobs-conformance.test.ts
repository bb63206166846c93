import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { describeBlobStoreConformance } from "../src/conformance/index.js";
import { frameLine } from "../src/entry/line-frame.js";
import { FsStore } from "../src/fs/fs-store.js";
import { blobPath } from "./helpers/blob-files.js";

for (const durability of ["none", "fsync"] as const) {
  describeBlobStoreConformance(
    `FsStore (durability: ${durability})`,
    async () => {
      const root = await mkdtemp(join(tmpdir(), "podkit-blobs-"));
      const stores = [new FsStore({ root, durability })];
      return {
        store: stores[0] as FsStore,
        openSecond() {
          const second = new FsStore({ root, durability });
          stores.push(second);
          return second;
        },
        readRaw: (digest) =>
          readFile(blobPath(root, digest)).catch((error: NodeJS.ErrnoException) => {
            if (error.code === "ENOENT") return undefined;
            throw error;
          }),
        tamper: (digest, bytes) => writeFile(blobPath(root, digest), bytes),
        async age(digest, ageMs) {
          const then = new Date(Date.now() - ageMs);
          await utimes(blobPath(root, digest), then, then);
        },
        async writeRaw(ref, texts) {
          await mkdir(join(root, ref.sessionId), { recursive: true });
          const lines = texts.map((text, seq) => `${frameLine(text, seq)}\n`).join("");
          await writeFile(join(root, ref.sessionId, `${ref.segmentId}.jsonl`), lines);
        },
        async dispose() {
          await Promise.all(stores.map((store) => store.close()));
          await rm(root, { recursive: true, force: true });
        },
      };
    },
    { describe, it },
  );
}
