import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FsStore, readSessionView, SessionLog } from "../src/index.js";

// The tree of sub-pods a session belongs to, as `session show --json` and `GET /sessions/:id`
// give it, read from real logs: children name their parent in `segment_start.parent`.

let root: string | undefined;
afterEach(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

async function storeWithTree() {
  root = await mkdtemp(join(tmpdir(), "podkit-session-tree-"));
  const store = new FsStore({ root });
  const session = async (parent?: { session_id: string; role: string; depth: number }) => {
    const log = await SessionLog.create(store, {
      systemPrompt: "s",
      config: {},
      ...(parent === undefined ? {} : { parent: { ...parent, call_id: `call-${parent.depth}` } }),
    });
    return log.sessionId;
  };
  const top = await session();
  const first = await session({ session_id: top, role: "worker", depth: 1 });
  const grandchild = await session({ session_id: first, role: "reviewer", depth: 2 });
  const second = await session({ session_id: top, role: "worker", depth: 1 });
  const unrelated = await session();
  const orphan = await session({
    session_id: "0190f6f2-0000-7000-8000-000000000000",
    role: "worker",
    depth: 1,
  });
  return { store, top, first, grandchild, second, unrelated, orphan };
}

describe("the session tree of a session view", () => {
  it("is the same tree from every member: the root, its children newest first, a grandchild; nothing else", async () => {
    const s = await storeWithTree();
    const shape = (node: { sessionId: string; children: unknown[] }): unknown => ({
      id: node.sessionId,
      children: (node.children as { sessionId: string; children: unknown[] }[]).map(shape),
    });
    const expected = {
      id: s.top,
      children: [
        { id: s.second, children: [] },
        { id: s.first, children: [{ id: s.grandchild, children: [] }] },
      ],
    };
    for (const id of [s.top, s.first, s.grandchild, s.second]) {
      const view = await readSessionView(s.store, id);
      expect(view.sessionId).toBe(id);
      expect(shape(view.tree)).toEqual(expected);
    }
    const child = (await readSessionView(s.store, s.grandchild)).tree.children[1]?.children[0];
    expect(child).toMatchObject({
      parent: { sessionId: s.first, role: "reviewer", depth: 2 },
      status: "idle",
    });
    expect(shape((await readSessionView(s.store, s.unrelated)).tree)).toEqual({
      id: s.unrelated,
      children: [],
    });
    // A child whose parent is not in the store is the root of its own tree.
    expect(shape((await readSessionView(s.store, s.orphan)).tree)).toEqual({ id: s.orphan, children: [] });
    await s.store.close();
  });
});
