import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NOTES_MAX_BYTES } from "../src/context/notes-section.js";
import { collectWarnings } from "./helpers.js";
import { readAllSegments, text, usePodWorlds, type World } from "./pod-harness.js";

// Review finding: `.podkit/NOTES.md` linked to a file outside the workspace was read, sent to the
// provider and written to the session log. It must follow the `.podkit` root rule (issue 10).
const world = usePodWorlds();
const SECRET = "SECRET-KEY-FROM-OUTSIDE-THE-WORKSPACE";

/** Runs one turn and returns everything that left the pod: the captured requests and the log. */
async function oneTurn(w: World) {
  const { warnings, sink } = collectWarnings();
  const pod = await w.pod({ onWarning: sink });
  w.double.enqueue(text("ok"));
  await pod.run("hello");
  const requests = JSON.stringify(w.double.requests.map((request) => request.body));
  const log = JSON.stringify([...(await readAllSegments(w.workspace)).values()]);
  return { requests, log, warnings: warnings.map((warning) => warning.message) };
}

describe("the notes section reads .podkit/NOTES.md only from inside the workspace", () => {
  it("positive control: a regular NOTES.md reaches the request and the log", async () => {
    const w = await world({ files: { "project/.podkit/NOTES.md": `remember ${SECRET}` } });
    const { requests, log, warnings } = await oneTurn(w);
    expect(requests).toContain(SECRET);
    expect(log).toContain(SECRET);
    expect(warnings).toEqual([]);
  });

  it("a NOTES.md symlinked to a file outside the workspace is refused unread, with a warning", async () => {
    const w = await world({ files: { "outside/secret.txt": SECRET } });
    const target = join(w.root, "outside/secret.txt");
    await symlink(target, join(w.workspace, ".podkit/NOTES.md"));
    // The link really leads to the secret: without the check it would be read.
    expect(await readFile(join(w.workspace, ".podkit/NOTES.md"), "utf8")).toBe(SECRET);

    const { requests, log, warnings } = await oneTurn(w);
    expect(requests).not.toContain(SECRET);
    expect(log).not.toContain(SECRET);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(".podkit/NOTES.md is refused and not read");
    expect(warnings[0]).toContain(`resolves to ${target}`);
  });

  it("a NOTES.md symlinked to another file inside the workspace is read", async () => {
    const w = await world({ files: { "project/docs/notes.md": "inside notes" } });
    await symlink(join(w.workspace, "docs/notes.md"), join(w.workspace, ".podkit/NOTES.md"));
    const { requests, warnings } = await oneTurn(w);
    expect(requests).toContain("inside notes");
    expect(warnings).toEqual([]);
  });

  it("a NOTES.md that is not a regular file (a directory) is refused with a warning", async () => {
    const w = await world();
    await mkdir(join(w.workspace, ".podkit/NOTES.md"));
    const { warnings } = await oneTurn(w);
    expect(warnings).toEqual([expect.stringContaining("is not a regular file")]);
  });

  it(`a NOTES.md over ${NOTES_MAX_BYTES} bytes is cut there, with a warning and a line telling the model`, async () => {
    const w = await world();
    const head = "keep this. ".repeat(Math.floor(NOTES_MAX_BYTES / 11));
    await writeFile(join(w.workspace, ".podkit/NOTES.md"), `${head}${"x".repeat(1000)}TAIL-NEVER-SENT`);
    const { requests, log, warnings } = await oneTurn(w);
    expect(requests).toContain("keep this.");
    expect(requests).toContain(`only its first ${NOTES_MAX_BYTES} bytes are shown`);
    expect(requests).not.toContain("TAIL-NEVER-SENT");
    expect(log).not.toContain("TAIL-NEVER-SENT");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`over the ${NOTES_MAX_BYTES}-byte limit`);
  });

  it("the warning is given once, not before every request", async () => {
    const w = await world({ files: { "outside/secret.txt": SECRET } });
    await symlink(join(w.root, "outside/secret.txt"), join(w.workspace, ".podkit/NOTES.md"));
    const { warnings, sink } = collectWarnings();
    const pod = await w.pod({ onWarning: sink });
    for (const input of ["one", "two", "three"]) {
      w.double.enqueue(text(`answer ${input}`));
      await pod.run(input);
    }
    expect(warnings).toHaveLength(1);
  });
});
