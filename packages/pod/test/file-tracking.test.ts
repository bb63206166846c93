import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { type Entry, FsStore, sessionsRoot } from "@podkit/session-store";
import {
  definePodkitToolPackage,
  FILES_CHANGED_DOMAIN,
  type FilesChanged,
  parseFilesChanged,
} from "@podkit/tools";
import { describe, expect, it } from "vitest";
import { collectWarnings } from "./helpers.js";
import { sessionEntries, text, toolCall, usePodWorlds } from "./pod-harness.js";

// Issue 42: every file a pod changes — through write_file, edit_file or bash — is a
// `files.changed` entry naming the contents before and after by digest, the bytes in the blobs.

const world = usePodWorlds();
const LINUX = process.platform === "linux";
const SCOPED = `[[scope.allow]]\ntarget = ".."\npermission = "write"\n[tools]\nbash = true\n`;

const sha = (content: string) => `sha256:${createHash("sha256").update(content).digest("hex")}`;

function fileChanges(entries: readonly Entry<Item>[]): FilesChanged[] {
  return entries.flatMap((entry) =>
    entry.kind === "extension" && entry.domain === FILES_CHANGED_DOMAIN
      ? [entry.payload as FilesChanged]
      : [],
  );
}

/** The bytes the store's blobs hold under `digest`, as text. */
async function blobText(workspace: string, digest: string): Promise<string> {
  const store = new FsStore({ root: sessionsRoot(workspace) });
  try {
    return Buffer.from(await store.blobs.get(digest)).toString("utf8");
  } finally {
    await store.close();
  }
}

const FILES = {
  "project/src/a.ts": "export const a = 1;\n",
  "project/src/b.ts": "export const b = 1;\n",
  "project/src/c.ts": "export const c = 1;\n",
  "project/notes/old.txt": "to be removed\n",
  "project/notes/d.txt": "colour: red\n",
};

const SANDBOXES = [
  { name: "in the bwrap sandbox", extra: "", skip: !LINUX },
  { name: "without a sandbox", extra: `[sandbox]\nbackend = "none"\n`, skip: false },
];

describe.each(SANDBOXES)("file changes in the log, $name", ({ extra, skip }) => {
  it.skipIf(skip)(
    "edit_file ×3, then bash creates one file, deletes one and rewrites one with sed -i: exactly those changes, with the bytes in the blobs; a read-only command records nothing",
    async () => {
      const w = await world({ manifestExtra: SCOPED + extra, files: FILES });
      const pod = await w.pod({ mode: "bypass" });
      w.double.enqueue(
        toolCall("edit_file", { path: "src/a.ts", old_string: "= 1", new_string: "= 2" }, "call_a"),
        toolCall("edit_file", { path: "src/b.ts", old_string: "= 1", new_string: "= 2" }, "call_b"),
        toolCall("edit_file", { path: "src/c.ts", old_string: "= 1", new_string: "= 2" }, "call_c"),
        text("edited"),
      );
      await pod.run("edit").result;
      w.double.enqueue(
        toolCall("bash", { command: "echo fresh > notes/new.txt && rm notes/old.txt" }, "call_new"),
        toolCall("bash", { command: "sed -i 's/red/blue/' notes/d.txt" }, "call_sed"),
        toolCall("bash", { command: "cat src/a.ts notes/d.txt; ls -R" }, "call_read"),
        text("shelled"),
      );
      await pod.run("shell").result;

      const entries = await sessionEntries(w.workspace);
      const edit = (file: string) => ({
        path: `src/${file}.ts`,
        before: sha(`export const ${file} = 1;\n`),
        after: sha(`export const ${file} = 2;\n`),
      });
      expect(fileChanges(entries)).toEqual([
        { call_id: "call_a", tool: "edit_file", changes: [edit("a")] },
        { call_id: "call_b", tool: "edit_file", changes: [edit("b")] },
        { call_id: "call_c", tool: "edit_file", changes: [edit("c")] },
        {
          call_id: "call_new",
          tool: "bash",
          changes: [
            { path: "notes/new.txt", before: null, after: sha("fresh\n") },
            { path: "notes/old.txt", before: sha("to be removed\n"), after: null },
          ],
        },
        {
          call_id: "call_sed",
          tool: "bash",
          changes: [{ path: "notes/d.txt", before: sha("colour: red\n"), after: sha("colour: blue\n") }],
        },
      ]);
      // The blobs give every content back, byte for byte.
      for (const [digest, content] of [
        [sha("export const a = 1;\n"), "export const a = 1;\n"],
        [sha("export const c = 2;\n"), "export const c = 2;\n"],
        [sha("to be removed\n"), "to be removed\n"],
        [sha("fresh\n"), "fresh\n"],
        [sha("colour: red\n"), "colour: red\n"],
        [sha("colour: blue\n"), "colour: blue\n"],
      ] as const) {
        expect(await blobText(w.workspace, digest)).toBe(content);
      }
      // Each entry sits between its call and its result, inside its turn.
      for (const callId of ["call_a", "call_new", "call_sed"]) {
        const at = entries.findIndex(
          (e) => e.kind === "extension" && (e.payload as FilesChanged).call_id === callId,
        );
        expect(entries[at - 1]).toMatchObject({ kind: "assistant_item", item: { call_id: callId } });
        expect(entries[at + 1]).toMatchObject({ kind: "tool_result", item: { call_id: callId } });
      }
      expect(await readFile(join(w.workspace, "notes/d.txt"), "utf8")).toBe("colour: blue\n");
      // The commands ran where the name says.
      expect(entries.find((e) => e.kind === "extension" && e.domain === "sandbox.probe")).toMatchObject({
        payload: { active: extra === "" },
      });
    },
    60_000,
  );
});

describe("write_file and the switch", () => {
  it("write_file records a new file with before null and a replaced one with its old content", async () => {
    const w = await world({ manifestExtra: SCOPED, files: { "project/keep.md": "old\n" } });
    const pod = await w.pod({ mode: "bypass" });
    w.double.enqueue(
      toolCall("write_file", { path: "made/new.md", content: "new\n" }, "call_new"),
      toolCall("write_file", { path: "keep.md", content: "replaced\n" }, "call_keep"),
      toolCall("write_file", { path: "keep.md", content: "replaced\n" }, "call_same"),
      text("done"),
    );
    await pod.run("write").result;
    expect(fileChanges(await sessionEntries(w.workspace))).toEqual([
      {
        call_id: "call_new",
        tool: "write_file",
        changes: [{ path: "made/new.md", before: null, after: sha("new\n") }],
      },
      {
        call_id: "call_keep",
        tool: "write_file",
        changes: [{ path: "keep.md", before: sha("old\n"), after: sha("replaced\n") }],
      },
      // Writing the same content again changes nothing: no entry.
    ]);
    expect(await blobText(w.workspace, sha("old\n"))).toBe("old\n");
  });

  it("[tools] track_files = false: no entry and no blob; positive control: on by default", async () => {
    for (const track of [false, true]) {
      const w = await world({
        manifestExtra: `${SCOPED}track_files = ${track}\n[sandbox]\nbackend = "none"\n`,
        files: { "project/x.txt": "x\n" },
      });
      const pod = await w.pod({ mode: "bypass" });
      w.double.enqueue(
        toolCall("edit_file", { path: "x.txt", old_string: "x", new_string: "y" }),
        toolCall("bash", { command: "echo z > z.txt" }),
        text("done"),
      );
      await pod.run("go").result;
      expect(fileChanges(await sessionEntries(w.workspace)).map((e) => e.tool)).toEqual(
        track ? ["edit_file", "bash"] : [],
      );
      expect(existsSync(join(sessionsRoot(w.workspace), ".blobs"))).toBe(track);
    }
  });
});

describe("a tool package's report is checked like everything read from outside", () => {
  it("a change naming contents the blobs do not hold is left out with a warning; the same change stored through ctx.blobs is recorded", async () => {
    const claimed = sha("never stored\n");
    const reporter = definePodkitToolPackage({
      name: "reporter",
      tools: (ctx) => [
        () => ({
          name: "claim",
          description: "reports a change",
          inputSchema: { type: "object", properties: { store: { type: "boolean" } } },
          async execute(args: { store?: boolean }) {
            const after = args.store
              ? await ctx.blobs?.put(new TextEncoder().encode("never stored\n"))
              : claimed;
            return {
              summary: "done",
              fileChanges: [{ path: "out/x.txt", before: null, after: after ?? null }],
            };
          },
        }),
        () => ({
          name: "escape",
          description: "reports a path outside the workspace",
          inputSchema: { type: "object" },
          execute: () => ({
            summary: "done",
            fileChanges: [{ path: "../etc/passwd", before: null, after: claimed }],
          }),
        }),
      ],
    });
    const w = await world({ manifestExtra: SCOPED, toolPackages: [reporter] });
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ mode: "bypass", onWarning: sink });
    w.double.enqueue(
      toolCall("claim", {}, "call_unstored"),
      toolCall("escape", {}, "call_escape"),
      toolCall("claim", { store: true }, "call_stored"),
      text("done"),
    );
    await pod.run("go").result;
    expect(fileChanges(await sessionEntries(w.workspace))).toEqual([
      {
        call_id: "call_stored",
        tool: "claim",
        changes: [{ path: "out/x.txt", before: null, after: claimed }],
      },
    ]);
    const messages = warnings.map((warning) => warning.message);
    expect(messages).toContainEqual(
      expect.stringContaining("(call_unstored) named contents the blobs do not hold"),
    );
    expect(messages).toContainEqual(
      expect.stringContaining("(call_escape) reported file changes that are not valid"),
    );
  });
});

describe("the fixture of the format", () => {
  it("v3/files-changed.jsonl holds payloads exactly as the pod writes them", async () => {
    const fixture = new URL("../../session-store/test/fixtures/v3/files-changed.jsonl", import.meta.url);
    const payloads = (await readFile(fixture, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.kind === "extension" && entry.domain === FILES_CHANGED_DOMAIN)
      .map((entry) => entry.payload);
    expect(payloads).toHaveLength(2);
    for (const payload of payloads) expect(parseFilesChanged(payload)).toEqual(payload);
  });
});
