// The docs stand alone: the specification the project was built from is not in this repository,
// so no page a reader gets (docs, README, changesets, the examples) and no shipped source (its
// doc comments reach users through the .d.ts files and the conformance suite's test names) may
// send them to "SPEC §N" or a bare "§N". Say it where it is needed instead.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SKIP = new Set(["node_modules", "dist", ".turbo", "test-results", ".git"]);
const CITATION = /\bSPEC\b|§\s*\d/;

function filesUnder(dir, keep) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(entry.name)) out.push(path);
  }
  return out;
}

/** `file:line: text` of every line citing the specification. */
function citations(files) {
  const found = [];
  for (const file of files) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (CITATION.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

const markdown = (name) => name.endsWith(".md");
const source = (name) => /\.(ts|mts|mjs|js)$/.test(name);

describe("the docs stand alone", () => {
  it("finds a citation where there is one (positive control)", () => {
    expect(CITATION.test("The session log of SPEC §2: an append-only record")).toBe(true);
    expect(CITATION.test("## The run prelude (§4.1)")).toBe(true);
    expect(CITATION.test("see docs/session-store.md, Durability")).toBe(false);
  });

  it("no doc, README, changeset or example cites the specification", () => {
    const files = [
      join(ROOT, "README.md"),
      ...filesUnder(join(ROOT, "docs"), markdown),
      ...filesUnder(join(ROOT, ".changeset"), markdown),
      ...filesUnder(join(ROOT, "examples"), markdown),
    ];
    expect(files.length).toBeGreaterThan(20);
    expect(citations(files)).toEqual([]);
  });

  it("no shipped source cites it either", () => {
    const files = readdirSync(join(ROOT, "packages")).flatMap((pkg) =>
      filesUnder(join(ROOT, "packages", pkg, "src"), source),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(citations(files)).toEqual([]);
  });
});
