import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsStore } from "../src/fs/fs-store.js";
import { newId } from "../src/ids.js";
import { spawnChild } from "./helpers/children.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();
const CHILDREN = 4;

/** `CHILDREN` real processes creating the same segment at the same moment; what each reported. */
async function race(mode: "link" | "legacy") {
  const root = await tempDir();
  const barrier = join(root, `barrier-${mode}`);
  await mkdir(barrier);
  const ref = { sessionId: newId(), segmentId: newId() };
  const names = Array.from({ length: CHILDREN }, (_, i) => `creator-${i}`);
  const children = names.map((name) =>
    spawnChild("create-child.mjs", [
      mode,
      root,
      ref.sessionId,
      ref.segmentId,
      name,
      barrier,
      String(CHILDREN),
    ]),
  );
  const reports = await Promise.all(
    children.map(
      async (child) => JSON.parse(await child.next()) as { name: string; ok?: true; error?: string },
    ),
  );
  await Promise.all(children.map((child) => child.exited));
  const path = new FsStore({ root }).segmentPath(ref);
  const stored = JSON.parse((await readFile(path, "utf8")).split("\n")[0] as string) as {
    system_prompt: string;
  };
  const leftovers = (await readdir(join(root, ref.sessionId))).filter((file) => file.includes(".tmp-"));
  return { reports, stored: stored.system_prompt, leftovers };
}

describe("creating a segment is exclusive across processes (issue 22 §14)", () => {
  it("of processes creating one segment at once, exactly one succeeds and its content is what stays", {
    timeout: 60_000,
  }, async () => {
    // Positive control: check-then-rename lets every process pass the check before any renames,
    // so several "succeed" and all but the last lose their segment without a word.
    const legacy = await race("legacy");
    const legacyWinners = legacy.reports.filter((report) => report.ok);
    expect(legacyWinners.length).toBeGreaterThan(1);

    for (let round = 0; round < 3; round++) {
      const { reports, stored, leftovers } = await race("link");
      const winners = reports.filter((report) => report.ok);
      expect(winners, JSON.stringify(reports)).toHaveLength(1);
      expect(reports.filter((report) => report.error === "SessionStoreUsageError")).toHaveLength(
        CHILDREN - 1,
      );
      expect(stored).toBe(winners[0]?.name);
      expect(leftovers).toEqual([]);
    }
  });
});
