import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./run-bin.js";

describe("README documentation list", () => {
  it("names every docs/*.md file, and only files that exist", async () => {
    const docs = (await readdir(join(REPO_ROOT, "docs"))).filter((f) => f.endsWith(".md")).sort();
    const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
    const section = readme.split("\n## Documentation\n")[1]?.split("\n## ")[0] ?? "";
    const listed = [...section.matchAll(/^- `docs\/([^`]+\.md)`/gm)].map((m) => m[1]).sort();
    expect(docs.length).toBeGreaterThan(0);
    expect(listed).toEqual(docs);
  });
});
