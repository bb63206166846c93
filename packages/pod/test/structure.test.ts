import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The shape issue 36 left the package in, held by a test so it does not drift back: the `Pod`
// facade stays small (each feature's wiring lives in its own folder), and `subpods/` and
// `budget/` sit below `pod/` — they import nothing from it, so no circle runs between them.

const SRC = join(import.meta.dirname, "..", "src");

async function sources(folder: string): Promise<{ file: string; text: string }[]> {
  const names = (await readdir(join(SRC, folder))).filter(
    (name) => name.endsWith(".ts") && !name.endsWith(".test.ts"),
  );
  return Promise.all(
    names.map(async (name) => ({
      file: `${folder}/${name}`,
      text: await readFile(join(SRC, folder, name), "utf8"),
    })),
  );
}

describe("the pod package's structure", () => {
  it("pod.ts stays a facade of at most 400 lines", async () => {
    const lines = (await readFile(join(SRC, "pod", "pod.ts"), "utf8")).split("\n").length;
    expect(lines).toBeLessThanOrEqual(400);
  });

  it("subpods/ and budget/ import nothing from pod/: no circle between the folders", async () => {
    for (const { file, text } of [...(await sources("subpods")), ...(await sources("budget"))]) {
      expect(text, file).not.toMatch(/from "\.\.\/pod\//);
    }
    // Control: pod/ does import them (the direction that stays).
    const pod = (await sources("pod")).map(({ text }) => text).join("\n");
    expect(pod).toMatch(/from "\.\.\/subpods\//);
    expect(pod).toMatch(/from "\.\.\/budget\//);
  });
});
