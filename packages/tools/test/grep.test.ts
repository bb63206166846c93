import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type PodTools, type tempRoot, workspaceTools } from "./helpers.js";

let t: Awaited<ReturnType<typeof tempRoot>>;
let ws: string;
let tools: PodTools;

beforeEach(async () => {
  ({ t, ws, tools } = await workspaceTools("read"));
});

async function grepLines(args: Record<string, unknown>): Promise<string[]> {
  const result = await tools.call("grep", { limit: 5000, ...args });
  expect(result.is_error, result.summary).toBeUndefined();
  return result.content === "" || result.content === undefined ? [] : result.content.split("\n");
}

describe("grep's plain-text fast path", () => {
  it("finds what the same text as a regular expression finds, bytes and all", async () => {
    await t.write("ws/a.txt", "café au lait\nnothing here\nun café\n");
    // Invalid UTF-8 around the text: a byte search must not miss what the decoded text holds.
    await writeFile(join(ws, "b.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(" café\n")]));
    await t.write("ws/c.txt", "cafe without the accent\n");
    const literal = await grepLines({ pattern: "café" });
    // "(?:café)" is the same text written with regex syntax, so it takes the regex path.
    const regex = await grepLines({ pattern: "(?:café)" });
    expect(literal).toEqual(["a.txt:1:café au lait", "a.txt:3:un café", "b.txt:1:\uFFFD\uFFFD café"]);
    expect(regex).toEqual(literal);
  });

  it("takes regex syntax as regex and folds case when asked", async () => {
    await t.write("ws/a.txt", "a.b\naxb\nA.B\n");
    expect(await grepLines({ pattern: "a.b" })).toEqual(["a.txt:1:a.b", "a.txt:2:axb"]);
    expect(await grepLines({ pattern: "a\\.b", case_insensitive: true })).toEqual([
      "a.txt:1:a.b",
      "a.txt:3:A.B",
    ]);
    // Without letters, case folding changes nothing and the plain-text path serves it.
    expect(await grepLines({ pattern: "->", case_insensitive: true })).toEqual([]);
  });

  it("matches $ at the end of a CRLF line", async () => {
    await t.write("ws/dos.txt", "first end\r\nsecond\r\n");
    expect(await grepLines({ pattern: "end$" })).toEqual(["dos.txt:1:first end"]);
  });
});

describe("grep over a tree", () => {
  it("skips a file with a NUL byte in its first 8 KiB, reads one whose NUL comes later", async () => {
    await writeFile(join(ws, "early.bin"), Buffer.concat([Buffer.from([0]), Buffer.from("\nneedle\n")]));
    const late = Buffer.concat([Buffer.from("needle\n"), Buffer.alloc(9000, 0x61), Buffer.from([0])]);
    await writeFile(join(ws, "late.txt"), late);
    expect(await grepLines({ pattern: "needle" })).toEqual(["late.txt:1:needle"]);
    // Named on its own, the binary file is reported as not searched rather than as no match.
    const alone = await tools.call("grep", { pattern: "needle", path: "early.bin" });
    expect(alone.summary).toContain('binary, not searched ×1 (e.g. "early.bin")');
  });

  it("leaves out a file over 16 MiB and says so", async () => {
    await writeFile(join(ws, "huge.txt"), Buffer.alloc(16 * 1024 * 1024 + 1, "needle\n"));
    await t.write("ws/small.txt", "needle\n");
    const result = await tools.call("grep", { pattern: "needle" });
    expect(result.content).toBe("small.txt:1:needle");
    expect(result.summary).toContain('over 16 MiB ×1 (e.g. "huge.txt")');
  });

  it("reports depth-first in name order while listing directories ahead", async () => {
    const expected: string[] = [];
    for (let d = 0; d < 12; d++) {
      for (const sub of ["", "/inner"]) {
        for (let f = 0; f < 3; f++) {
          const rel = `d${String(d).padStart(2, "0")}${sub}/f${f}.txt`;
          await t.write(`ws/${rel}`, `hit ${rel}\n`);
        }
      }
    }
    for (let d = 0; d < 12; d++) {
      const dir = `d${String(d).padStart(2, "0")}`;
      for (let f = 0; f < 3; f++) expected.push(`${dir}/f${f}.txt:1:hit ${dir}/f${f}.txt`);
      for (let f = 0; f < 3; f++) expected.push(`${dir}/inner/f${f}.txt:1:hit ${dir}/inner/f${f}.txt`);
    }
    expect(await grepLines({ pattern: "hit" })).toEqual(expected);
  });
});
