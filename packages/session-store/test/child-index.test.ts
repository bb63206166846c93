import { existsSync } from "node:fs";
import { mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsStore, listSessionRows, SessionLog } from "../src/index.js";
import { fixtureRef, plantFixtures } from "./helpers/fixture-states.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

const link = (parent: string, call: string) => ({ session_id: parent, call_id: call, role: "r", depth: 1 });

describe("the filesystem store's child index", () => {
  it("a child is marked in its parent's directory before its segment exists; a marker without a session is not listed", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const parent = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    const child = await SessionLog.create(store, {
      systemPrompt: "c",
      config: {},
      parent: link(parent.sessionId, "c1"),
    });
    expect((await readdir(join(root, parent.sessionId))).filter((n) => n.startsWith(".child-"))).toEqual([
      `.child-${child.sessionId}`,
    ]);
    // A crash between the marker and the child's segment: the marker names nothing listable.
    await writeFile(join(root, parent.sessionId, ".child-01900000-0000-7000-8000-00000000dead"), "");
    await mkdir(join(root, "01900000-0000-7000-8000-00000000dead"));
    expect(await store.listChildSessions(parent.sessionId)).toEqual([child.sessionId]);
    await store.close();
  });

  it("a parent written before the index (a v2 log) gets its children by one scan, and markers for later readers", async () => {
    const root = await tempDir();
    await plantFixtures(root, "v2/subpod-parent.jsonl", "v2/subpod-child.jsonl", "v2/plain.jsonl");
    const parent = fixtureRef("v2/subpod-parent.jsonl").sessionId;
    const child = fixtureRef("v2/subpod-child.jsonl").sessionId;
    // Positive control: no marker on disk, the index alone knows nothing.
    expect(existsSync(join(root, parent, `.child-${child}`))).toBe(false);
    const store = new FsStore({ root });
    expect(await store.listChildSessions(parent)).toEqual([child]);
    expect(existsSync(join(root, parent, `.child-${child}`))).toBe(true);
    expect(await store.listChildSessions(fixtureRef("v2/plain.jsonl").sessionId)).toEqual([]);
    await store.close();
  });

  it("a symlink planted in a marker's place is never written through", async () => {
    const root = await tempDir();
    const outside = await tempDir();
    const store = new FsStore({ root });
    const parent = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    const target = join(outside, "written-through");
    const childId = "01900000-0000-7000-8000-0000000c0de0";
    await symlink(target, join(root, parent.sessionId, `.child-${childId}`));
    await SessionLog.create(
      store,
      { systemPrompt: "c", config: {}, parent: link(parent.sessionId, "c2") },
      {
        newId: (() => {
          const ids = [childId, "01900000-0000-7000-8000-0000000c0de1"];
          return () => ids.shift() as string;
        })(),
      },
    );
    // The child was created under the id the symlink waits at, and nothing went through it.
    expect(existsSync(join(root, childId))).toBe(true);
    expect(existsSync(target)).toBe(false);
    await store.close();
  });

  it("a session directory without a segment is left out of the listing with a reason, and removeSessionDebris removes only such a one", async () => {
    const root = await tempDir();
    const store = new FsStore({ root });
    const real = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    const debris = "01900000-0000-7000-8000-0000000000aa";
    await mkdir(join(root, debris));
    await writeFile(join(root, debris, "01900000-0000-7000-8000-0000000000ab.jsonl.lock"), "123");
    const skipped: { sessionId: string; problem: string }[] = [];
    const rows = await listSessionRows(store, { onSkipped: (s) => skipped.push(s) });
    expect(rows.map((row) => row.sessionId)).toEqual([real.sessionId]);
    expect(skipped).toEqual([{ sessionId: debris, problem: "it has no segment" }]);
    expect(await store.removeSessionDebris(real.sessionId)).toBe(false);
    expect(await store.removeSessionDebris(debris)).toBe(true);
    expect(existsSync(join(root, debris))).toBe(false);
    expect(existsSync(join(root, real.sessionId))).toBe(true);
    // A directory holding anything else the store did not put there is left alone.
    await mkdir(join(root, debris));
    await writeFile(join(root, debris, "notes.txt"), "mine");
    expect(await store.removeSessionDebris(debris)).toBe(false);
    await rm(join(root, debris), { recursive: true });
    await store.close();
  });
});
