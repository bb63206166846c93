// A process putting blobs until it is killed, using the BUILT package:
//   node blob-put-child.mjs <mode> <root>
// Prints "ready" once loaded, waits for "go" on stdin, then puts 16 MiB blobs of random bytes one
// after another, printing "done <digest>" after each put resolved. Modes:
//   store  FsStore's blobs.put (temp file in the blob's directory, then rename);
//   naive  the positive control: the bytes written straight to the digest's path.
import { createHash, randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { FsStore } from "../../dist/index.js";

const [mode, root] = process.argv.slice(2);
const SIZE = 16 << 20;
const store = new FsStore({ root });

async function naivePut(bytes) {
  const hex = createHash("sha256").update(bytes).digest("hex");
  const path = join(root, ".blobs", "sha256", hex.slice(0, 2), hex.slice(2));
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
  return `sha256:${hex}`;
}

process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line !== "go") continue;
  for (;;) {
    const bytes = randomBytes(SIZE);
    const digest = mode === "naive" ? await naivePut(bytes) : await store.blobs.put(bytes);
    process.stdout.write(`done ${digest}\n`);
  }
}
