import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { collectBlobGarbage } from "../src/blobs/collect-garbage.js";
import { BlobCorruptError, SessionStoreUsageError } from "../src/errors.js";
import { FsStore } from "../src/fs/fs-store.js";
import { SessionLog } from "../src/log/session-log.js";
import { listSessionRows } from "../src/read/session-rows.js";
import type { Store } from "../src/store/store.js";
import { blobFiles, blobPath } from "./helpers/blob-files.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();
const HOUR = 60 * 60 * 1000;
const text = (value: string) => Buffer.from(value, "utf8");
const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const usage = (error: unknown) => SessionStoreUsageError.isInstance(error);

async function aged(path: string, ageMs: number): Promise<void> {
  const then = new Date(Date.now() - ageMs);
  await utimes(path, then, then);
}

describe("FsStore blobs on disk", () => {
  it("live at <root>/.blobs/sha256/<2 hex>/<62 hex>, whole, with nothing else left; session listings never see them", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    const bytes = text("const x = 1;\n");
    const digest = await store.blobs.put(bytes);
    const hex = digest.slice(7);
    expect(relative(root, blobPath(root, digest))).toBe(
      join(".blobs", "sha256", hex.slice(0, 2), hex.slice(2)),
    );
    expect(await readFile(blobPath(root, digest))).toEqual(bytes);
    expect(await readdir(join(root, ".blobs", "sha256", hex.slice(0, 2)))).toEqual([hex.slice(2)]);
    // `.blobs` is no session: a session id cannot begin with a dot.
    expect(await store.listSessions()).toEqual([log.sessionId]);
    const skipped: unknown[] = [];
    await listSessionRows(store, { onSkipped: (debris) => skipped.push(debris) });
    expect(skipped).toEqual([]);
    await store.close();
  });

  it("a malformed digest never becomes a path: the one that would escape the root is refused", async () => {
    const root = join(await tempDir(), "sessions");
    const store = new FsStore({ root });
    const escaping = `sha256:../../../${"a".repeat(55)}`;
    // Positive control: made into a path the way a valid digest is, it leaves the store's root.
    const naive = join(root, ".blobs", "sha256", escaping.slice(7, 9), escaping.slice(9));
    expect(relative(root, naive).startsWith("..")).toBe(true);
    await expect(store.blobs.get(escaping)).rejects.toSatisfy(usage);
    await expect(store.blobs.remove([escaping])).rejects.toSatisfy(usage);
    expect(existsSync(root)).toBe(false);
  });

  it("follows no symbolic link out of the store: a linked .blobs directory or shard is refused, writing nothing outside", async () => {
    const base = await tempDir();
    const outside = join(base, "outside");
    await mkdir(outside);
    const bytes = text("secret plans");
    const digest = sha256(bytes);
    const hex = digest.slice(7);

    // The whole blob directory linked elsewhere.
    const root = join(base, "sessions");
    await mkdir(root);
    await symlink(outside, join(root, ".blobs"));
    // Positive control: writing through the path as it stands lands outside the store.
    const naive = blobPath(root, digest);
    await mkdir(join(naive, ".."), { recursive: true });
    await writeFile(naive, bytes);
    expect(await readdir(outside)).toEqual(["sha256"]);
    await rm(join(outside, "sha256"), { recursive: true });
    const store = new FsStore({ root });
    await expect(store.blobs.put(bytes)).rejects.toSatisfy(
      (error: unknown) => usage(error) && /\.blobs is a symbolic link/.test((error as Error).message),
    );
    await expect(store.blobs.get(digest)).rejects.toSatisfy(usage);
    await expect(store.blobs.has(digest)).rejects.toSatisfy(usage);
    await expect(store.blobs.remove([digest])).rejects.toSatisfy(usage);
    expect(await readdir(outside)).toEqual([]);

    // One shard directory linked elsewhere.
    const other = join(base, "other");
    const shardOutside = join(base, "shard-outside");
    await mkdir(join(other, ".blobs", "sha256"), { recursive: true });
    await mkdir(shardOutside);
    await symlink(shardOutside, join(other, ".blobs", "sha256", hex.slice(0, 2)));
    const second = new FsStore({ root: other });
    await expect(second.blobs.put(bytes)).rejects.toSatisfy(usage);
    await expect(second.blobs.get(digest)).rejects.toSatisfy(usage);
    expect(await readdir(shardOutside)).toEqual([]);
    const listed: string[] = [];
    for await (const found of second.blobs.list()) listed.push(found);
    expect(listed).toEqual([]);
  });

  it("a blob file that is a link is not read through: get is BlobCorruptError, has is false, put replaces the link", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const bytes = text("right content");
    const digest = await store.blobs.put(bytes);
    await store.blobs.remove([digest]);
    const target = join(root, "elsewhere");
    await writeFile(target, bytes);
    await symlink(target, blobPath(root, digest));
    await expect(store.blobs.get(digest)).rejects.toSatisfy(
      (error: unknown) =>
        BlobCorruptError.isInstance(error) && /symbolic link/.test((error as Error).message),
    );
    expect(await store.blobs.has(digest)).toBe(false);
    expect(await store.blobs.put(bytes)).toBe(digest);
    expect(await store.blobs.get(digest)).toEqual(bytes);
    expect(await readFile(target)).toEqual(bytes);
    expect((await blobFiles(root)).whole).toEqual([digest]);
  });

  it("debris: a temp file is invisible and removed once past the grace period; a blob a removal left aside is put back", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const kept = await store.blobs.put(text("kept"));
    const hex = kept.slice(7);
    const shard = join(root, ".blobs", "sha256", hex.slice(0, 2));
    const stale = join(shard, `${"b".repeat(62)}.tmp-123-0badf00d`);
    const fresh = join(shard, `${"c".repeat(62)}.tmp-124-0badf00d`);
    await writeFile(stale, "partial");
    await writeFile(fresh, "being written");
    await aged(stale, 2 * HOUR);
    // A removal killed between moving a blob aside and deciding on it.
    const aside = await store.blobs.put(text("set aside"));
    const asideHex = aside.slice(7);
    const asidePath = join(
      root,
      ".blobs",
      "sha256",
      asideHex.slice(0, 2),
      `${asideHex.slice(2)}.gc-99-01234567`,
    );
    await mkdir(join(asidePath, ".."), { recursive: true });
    await writeFile(asidePath, text("set aside"));
    await store.blobs.remove([aside]);
    expect(await store.blobs.has(aside)).toBe(false);

    const listed: string[] = [];
    for await (const digest of store.blobs.list()) listed.push(digest);
    expect(listed).toEqual([kept]);

    const dry = await collectBlobGarbage(store, { dryRun: true });
    expect(dry.debris.sort()).toEqual([stale, asidePath].sort());
    expect(existsSync(stale)).toBe(true);
    const report = await collectBlobGarbage(store);
    expect(report.debris.sort()).toEqual([stale, asidePath].sort());
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true); // a put may still be writing it
    expect(await store.blobs.get(aside)).toEqual(text("set aside"));
  });

  it("garbage collection refuses a store that keeps no blobs", async () => {
    const store = new FsStore({ root: await tempDir() });
    const withoutBlobs = new Proxy(store, {
      get: (target, property) => (property === "blobs" ? undefined : Reflect.get(target, property, target)),
    }) as Store;
    await expect(collectBlobGarbage(withoutBlobs)).rejects.toSatisfy(
      (error: unknown) => usage(error) && /keeps no blobs/.test((error as Error).message),
    );
  });
});
