import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import type { Item } from "@podkit/llm-worker";
import { type Entry, sessionsRoot } from "@podkit/session-store";
import { PostgresStore } from "@podkit/store-postgres";
import { FILES_CHANGED_DOMAIN, type FilesChanged } from "@podkit/tools";
import { describe, expect, it } from "vitest";
// The PostgreSQL test harness lives with the store (it resolves `pg` from there).
import { usePostgresDatabases } from "../../store-postgres/test/helpers/databases.js";
import { text, toolCall, usePodWorlds } from "./pod-harness.js";

// Issue 42 on a shared store: the contents a session's file changes name are in the database,
// where another machine opening the same store finds them.

const database = usePostgresDatabases();
const world = usePodWorlds();
const sha = (content: string) => `sha256:${createHash("sha256").update(content).digest("hex")}`;

describe("file changes on the PostgreSQL store", () => {
  it("the entries are in the session's log and every content they name is in the database, read back by another store instance", async () => {
    const url = await database();
    const w = await world({
      manifestExtra: `[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nbash = true\n[sandbox]\nbackend = "none"\n`,
      files: { "project/a.txt": "one\n" },
    });
    const store = new PostgresStore<Item>({ url });
    const pod = await w.pod({ mode: "bypass", store });
    w.double.enqueue(
      toolCall("edit_file", { path: "a.txt", old_string: "one", new_string: "two" }, "call_edit"),
      toolCall("bash", { command: "rm a.txt && echo b > b.txt" }, "call_bash"),
      text("done"),
    );
    await pod.run("go").result;
    const sessionId = pod.sessionId as string;
    await pod.close();
    await store.close();

    const other = new PostgresStore<Item>({ url });
    try {
      const [segmentId] = await other.listSegments(sessionId);
      const entries: Entry<Item>[] = [];
      for await (const entry of other.readAll({ sessionId, segmentId: segmentId as string }))
        entries.push(entry);
      const changes = entries.flatMap((e) =>
        e.kind === "extension" && e.domain === FILES_CHANGED_DOMAIN ? [e.payload as FilesChanged] : [],
      );
      expect(changes).toEqual([
        {
          call_id: "call_edit",
          tool: "edit_file",
          changes: [{ path: "a.txt", before: sha("one\n"), after: sha("two\n") }],
        },
        {
          call_id: "call_bash",
          tool: "bash",
          changes: [
            { path: "a.txt", before: sha("two\n"), after: null },
            { path: "b.txt", before: null, after: sha("b\n") },
          ],
        },
      ]);
      for (const content of ["one\n", "two\n", "b\n"]) {
        expect(
          Buffer.from(await (other.blobs as NonNullable<typeof other.blobs>).get(sha(content))).toString(),
        ).toBe(content);
      }
      // Nothing went to the workspace's disk.
      expect(existsSync(sessionsRoot(w.workspace))).toBe(false);
    } finally {
      await other.close();
    }
  }, 60_000);
});
