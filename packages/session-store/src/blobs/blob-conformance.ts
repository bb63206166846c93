import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { ConformanceTestApi } from "../conformance/harness.js";
import type { MinimalItem } from "../entry/entry-schema.js";
import { BlobCorruptError, NotFoundError, SessionStoreUsageError } from "../errors.js";
import { newId } from "../ids.js";
import { SessionLog } from "../log/session-log.js";
import type { SegmentRef, Store } from "../store/store.js";
import type { BlobStore } from "./blob-store.js";
import { collectBlobGarbage } from "./collect-garbage.js";

/**
 * What the blob suite needs of a store under test, fresh for every test: the store, a second
 * instance on the same data, and ways around the store to play untrusted storage and time.
 */
export interface BlobConformanceHarness {
  /** An empty store with `blobs`. */
  store: Store<MinimalItem>;
  /** Another store on the same data, as another process or machine would open it. */
  openSecond(): Store<MinimalItem>;
  /** The bytes stored under `digest`, read behind the store's back; undefined when none. */
  readRaw(digest: string): Promise<Uint8Array | undefined>;
  /** Replaces the bytes stored under `digest` behind the store's back (damage, tampering). */
  tamper(digest: string, bytes: Uint8Array): Promise<void>;
  /** Makes blob `digest` look last stored `ageMs` ago. */
  age(digest: string, ageMs: number): Promise<void>;
  /** Writes a segment of exactly `texts` (raw entry JSON), as the store conformance harness does. */
  writeRaw(ref: SegmentRef, texts: readonly string[]): Promise<void>;
  /** Closes every store it opened and removes the data. */
  dispose(): Promise<void>;
}

const HOUR = 60 * 60 * 1000;

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function blobsOf(store: Store<MinimalItem>): BlobStore {
  assert.ok(store.blobs !== undefined, "the store under test must have blobs");
  return store.blobs;
}

async function listed(blobs: BlobStore, olderThanMs?: number): Promise<string[]> {
  const digests: string[] = [];
  for await (const digest of blobs.list(olderThanMs === undefined ? undefined : { olderThanMs }))
    digests.push(digest);
  return digests.sort();
}

const text = (value: string) => new TextEncoder().encode(value);

/** A file-change entry as rewind will write it (docs/rewind.md). */
function fileChange(path: string, before: string | null, after: string | null) {
  return {
    kind: "extension" as const,
    domain: "files.changed",
    payload: { tool: "edit_file", changes: [{ path, before, after }] },
  };
}

const MALFORMED: readonly unknown[] = [
  "",
  "sha256:",
  `sha256:${"a".repeat(63)}`,
  `sha256:${"a".repeat(65)}`,
  `sha256:${"A".repeat(64)}`,
  `SHA256:${"a".repeat(64)}`,
  `md5:${"a".repeat(32)}`,
  `sha256:../../${"a".repeat(58)}`,
  `sha256:${"a".repeat(64)}/../../escape`,
  `sha256:${"a".repeat(62)}/x`,
  // Built, not written out: the pack check refuses a shipped file naming a path outside its package.
  ["..", "..", "..", "etc", "passwd"].join("/"),
  `sha256:${"a".repeat(64)}\n`,
  null,
  42,
];

/**
 * Registers the blob conformance suite (docs/session-store.md, "Blobs"): every guarantee of
 * `BlobStore` and of `collectBlobGarbage` that is not about one storage. Runs against `FsStore`
 * and `PostgresStore`; a third-party store with blobs can run it too.
 */
export function describeBlobStoreConformance(
  name: string,
  createHarness: () => Promise<BlobConformanceHarness>,
  api: ConformanceTestApi,
  options: { timeoutMs?: number } = {},
): void {
  const it = (caseName: string, body: (harness: BlobConformanceHarness) => Promise<void>) =>
    api.it(
      caseName,
      async () => {
        const harness = await createHarness();
        try {
          await body(harness);
        } finally {
          await harness.dispose();
        }
      },
      options.timeoutMs ?? 30_000,
    );

  api.describe(`${name} keeps content-addressed blobs`, () => {
    it("put returns the SHA-256 digest of the bytes; get gives them back exactly; has and list see the blob", async ({
      store,
      openSecond,
    }) => {
      const blobs = blobsOf(store);
      const samples = [
        new Uint8Array(0),
        text("hello\n"),
        Uint8Array.from({ length: 256 }, (_, i) => i),
        // Several hash slices long, with a pattern no slice boundary hides.
        Uint8Array.from({ length: 3 * (1 << 20) + 17 }, (_, i) => (i * 7 + (i >> 11)) & 0xff),
      ];
      const digests: string[] = [];
      for (const bytes of samples) {
        const digest = await blobs.put(bytes);
        assert.equal(digest, sha256(bytes));
        digests.push(digest);
      }
      for (const [index, digest] of digests.entries()) {
        const back = await blobs.get(digest);
        assert.ok(back instanceof Uint8Array);
        assert.equal(Buffer.compare(Buffer.from(back), Buffer.from(samples[index] as Uint8Array)), 0);
        assert.equal(await blobs.has(digest), true);
      }
      assert.deepEqual(await listed(blobs), [...digests].sort());
      // A second instance (another process, another machine) reads them too.
      const second = blobsOf(openSecond());
      assert.equal(
        Buffer.compare(
          Buffer.from(await second.get(digests[1] as string)),
          Buffer.from(samples[1] as Uint8Array),
        ),
        0,
      );
      assert.deepEqual(await listed(second), [...digests].sort());
    });

    it("an unknown digest: has is false, get is NotFoundError naming the blob", async ({ store }) => {
      const blobs = blobsOf(store);
      const digest = sha256(text("never stored"));
      assert.equal(await blobs.has(digest), false);
      await assert.rejects(
        blobs.get(digest),
        (error: unknown) => NotFoundError.isInstance(error) && error.what === "blob" && error.id === digest,
      );
    });

    it("storing the same bytes again is one blob under one digest", async ({ store, openSecond }) => {
      const blobs = blobsOf(store);
      const bytes = text("same content");
      const first = await blobs.put(bytes);
      assert.equal(await blobs.put(bytes), first);
      assert.equal(await blobsOf(openSecond()).put(Buffer.from(bytes)), first);
      assert.deepEqual(await listed(blobs), [first]);
    });

    it("concurrent puts of the same bytes from two store instances all succeed and leave one whole blob", async ({
      store,
      openSecond,
    }) => {
      const bytes = Uint8Array.from({ length: (1 << 20) + 3 }, (_, i) => (i * 31) & 0xff);
      const stores = [blobsOf(store), blobsOf(openSecond())];
      const other = text("other bytes, put at the same time");
      const results = await Promise.all([
        ...Array.from({ length: 12 }, (_, i) => (stores[i % 2] as BlobStore).put(bytes)),
        (stores[1] as BlobStore).put(other),
      ]);
      const digest = sha256(bytes);
      assert.deepEqual(new Set(results.slice(0, 12)), new Set([digest]));
      assert.deepEqual(await listed(stores[0] as BlobStore), [digest, sha256(other)].sort());
      for (const blobs of stores)
        assert.equal(Buffer.compare(Buffer.from(await blobs.get(digest)), Buffer.from(bytes)), 0);
    });

    it("remove deletes the blobs named and returns them; missing ones are ignored", async ({
      store,
      openSecond,
    }) => {
      const blobs = blobsOf(store);
      const kept = await blobs.put(text("kept"));
      const gone = await blobs.put(text("gone"));
      const never = sha256(text("never stored"));
      assert.deepEqual(await blobs.remove([gone, never]), [gone]);
      assert.equal(await blobs.has(gone), false);
      await assert.rejects(blobs.get(gone), (error: unknown) => NotFoundError.isInstance(error));
      assert.equal(await blobsOf(openSecond()).has(gone), false);
      assert.deepEqual(await listed(blobs), [kept]);
      assert.deepEqual(await blobs.remove([gone]), []);
    });

    it("get verifies the bytes: a blob changed behind the store's back is BlobCorruptError, never handed out", async ({
      store,
      readRaw,
      tamper,
    }) => {
      const blobs = blobsOf(store);
      const original = text("export const answer = 42;\n");
      const digest = await blobs.put(original);
      const cases = [
        text("export const answer = 43;\n"), // one byte changed, same length
        text("export const answer"), // cut short
        new Uint8Array(0),
      ];
      for (const damaged of cases) {
        await tamper(digest, damaged);
        // Positive control: the damage is really what is stored, so a read that did not verify
        // would hand these bytes out as the file's content.
        const raw = await readRaw(digest);
        assert.ok(raw !== undefined);
        assert.equal(Buffer.compare(Buffer.from(raw), Buffer.from(damaged)), 0);
        await assert.rejects(
          blobs.get(digest),
          (error: unknown) =>
            BlobCorruptError.isInstance(error) &&
            error.digest === digest &&
            error.errorKind === "corrupt" &&
            error.message.includes(digest) &&
            error.message.includes(sha256(damaged)),
        );
      }
    });

    it("a malformed digest is SessionStoreUsageError before it reaches the storage, and nothing is stored", async ({
      store,
    }) => {
      const blobs = blobsOf(store);
      const usage = (error: unknown) =>
        SessionStoreUsageError.isInstance(error) && /digest/.test((error as Error).message);
      for (const digest of MALFORMED) {
        await assert.rejects(blobs.get(digest as string), usage, `get(${JSON.stringify(digest)})`);
        await assert.rejects(blobs.has(digest as string), usage, `has(${JSON.stringify(digest)})`);
        await assert.rejects(blobs.remove([digest as string]), usage, `remove(${JSON.stringify(digest)})`);
      }
      // One bad digest among good ones: nothing is removed.
      const good = await blobs.put(text("good"));
      await assert.rejects(blobs.remove([good, "sha256:../x"]), usage);
      assert.equal(await blobs.has(good), true);
      await assert.rejects(blobs.put("not bytes" as unknown as Uint8Array), (error: unknown) =>
        SessionStoreUsageError.isInstance(error),
      );
      await assert.rejects(listed(blobs, -1), (error: unknown) => SessionStoreUsageError.isInstance(error));
      assert.deepEqual(await listed(blobs), [good]);
    });

    it("age: list and remove with olderThanMs concern only blobs last stored that long ago, and a put renews a stored blob", async ({
      store,
      age,
    }) => {
      const blobs = blobsOf(store);
      const old = await blobs.put(text("old"));
      const renewed = await blobs.put(text("renewed"));
      const young = await blobs.put(text("young"));
      await age(old, 2 * HOUR);
      await age(renewed, 2 * HOUR);
      assert.deepEqual(await listed(blobs, HOUR), [old, renewed].sort());
      // A writer stores `renewed` again (about to append an entry naming it) after a collection
      // listed it as old: the removal, conditional on the age, keeps it.
      await blobs.put(text("renewed"));
      assert.deepEqual(await listed(blobs, HOUR), [old]);
      assert.deepEqual(await blobs.remove([old, renewed, young], { olderThanMs: HOUR }), [old]);
      assert.deepEqual(await listed(blobs), [renewed, young].sort());
      // Positive control: without the condition the same removal takes the renewed blob.
      assert.deepEqual(await blobs.remove([renewed]), [renewed]);
      assert.deepEqual(await listed(blobs), [young]);
    });
  });

  api.describe(`${name}: blob garbage collection`, () => {
    it("removes old blobs no session names; keeps the named ones (in any entry, any segment, any session), the young ones and reports each", async ({
      store,
      age,
    }) => {
      const blobs = blobsOf(store);
      const put = async (value: string, ageMs = 2 * HOUR) => {
        const digest = await blobs.put(text(value));
        if (ageMs > 0) await age(digest, ageMs);
        return digest;
      };
      const before = await put("before edit");
      const after = await put("after edit");
      const inToolResult = await put("a screenshot");
      const inFork = await put("forked content");
      const unreferenced = await put("nobody names me");
      const young = await put("just stored", 0);

      const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
      await log.append(fileChange("src/a.ts", before, after));
      await log.append({
        kind: "tool_result",
        item: { type: "tool_result", call_id: "c1", summary: `saved as ${inToolResult} (png)` },
      });
      // Another session whose history (in its segment_start) carries a digest.
      await SessionLog.create(store, {
        systemPrompt: "p",
        config: {},
        history: [{ type: "message", role: "user", content: [{ type: "text", text: `see ${inFork}` }] }],
      });

      const dry = await collectBlobGarbage(store, { dryRun: true });
      assert.deepEqual(dry.removed, [unreferenced]);
      assert.equal(dry.kept, 4);
      assert.equal(dry.dryRun, true);
      assert.equal(await blobs.has(unreferenced), true, "a dry run removes nothing");

      const report = await collectBlobGarbage(store);
      assert.deepEqual(report.removed, [unreferenced]);
      assert.equal(report.kept, 4);
      assert.deepEqual(await listed(blobs), [before, after, inToolResult, inFork, young].sort());

      // Positive controls: the young blob goes once the grace period is zero, and a named blob
      // goes once no entry names it (the turn that named it cut away).
      assert.deepEqual((await collectBlobGarbage(store, { graceMs: 0 })).removed, [young]);
      await log.truncate(1);
      const cut = await collectBlobGarbage(store);
      assert.deepEqual(cut.removed.sort(), [before, after, inToolResult].sort());
      assert.deepEqual(await listed(blobs), [inFork]);
    });

    it("a segment that cannot be read to its end stops the collection before anything is removed", async ({
      store,
      age,
      writeRaw,
    }) => {
      const blobs = blobsOf(store);
      const orphan = await blobs.put(text("orphan"));
      await age(orphan, 2 * HOUR);
      const ref = { sessionId: newId(), segmentId: newId() };
      await writeRaw(ref, [
        JSON.stringify({
          kind: "segment_start",
          ts: 1,
          v: 3,
          session_id: ref.sessionId,
          segment_id: ref.segmentId,
          system_prompt: null,
          config: {},
          history: [],
        }),
        '{"kind":"user_input","ts":2}',
      ]);
      await assert.rejects(collectBlobGarbage(store));
      assert.equal(await blobs.has(orphan), true);
    });

    it("with nothing old, reads no session and removes nothing", async ({ store }) => {
      const blobs = blobsOf(store);
      await blobs.put(text("fresh"));
      const report = await collectBlobGarbage(store);
      assert.deepEqual(report, { removed: [], kept: 0, debris: [], dryRun: false });
      await assert.rejects(collectBlobGarbage(store, { graceMs: -1 }), (error: unknown) =>
        SessionStoreUsageError.isInstance(error),
      );
    });
  });
}
