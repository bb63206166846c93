import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { compileLineMatcher, requiredText } from "../src/fs/line-matcher.js";
import { MatchLines, type OutputLine } from "../src/fs/match-lines.js";
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

describe("the text a regular expression requires", () => {
  const REQUIRED: [string, string | undefined][] = [
    ["needle_[0-9]+_found", "needle_"],
    ["ab*cd", "cd"],
    ["abc?de", "ab"],
    ["(foo)barbaz", "barbaz"],
    ["foo\\.bar", "foo.bar"],
    ["\\bword\\b", "word"],
    ["[abc]xyz", "xyz"],
    ["x{2}yz", "yz"],
    ["a(?=bc)de", "de"],
    ["\\d+px", "px"],
    ["café au", "café au"],
    ["a|bcd", undefined],
    ["(a|b)c", undefined],
    ["\uD83D\uDE00ab", "ab"],
    ["a.b", undefined],
  ];

  it.each(REQUIRED)("%s requires %s", (pattern, required) => {
    expect(requiredText(pattern)).toBe(required);
  });

  it("never passes over a block holding a line the regex matches", () => {
    const lines = [
      "needle_42_found",
      "xxcd",
      "abde",
      "abcde",
      "foo.bar",
      "a word here",
      "bxyz",
      "xxyz",
      "12px",
      "café au lait",
      "ab",
    ];
    for (const [pattern] of REQUIRED) {
      const regex = new RegExp(pattern);
      const matcher = compileLineMatcher(pattern, false);
      for (const line of lines) {
        if (!regex.test(line)) continue;
        expect(matcher.candidate(Buffer.from(`other\n${line}\n`)), `${pattern} on ${line}`).toBeDefined();
      }
      // And a block without the required text is passed over.
      const required = requiredText(pattern);
      if (required !== undefined)
        expect(matcher.candidate(Buffer.from("nothing of it\n")), pattern).toBeUndefined();
    }
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

  it("searches a file of several MiB chunk by chunk with the same lines and context as grep -C", async () => {
    // Matches on both sides of every 1 MiB read, with context lines crossing them.
    const lines = Array.from({ length: 90_000 }, (_, i) =>
      i % 7919 === 0 || i % 20_000 === 1 ? `hit ${i} here` : `line ${i} of filler text`,
    );
    await t.write("ws/big.txt", `${lines.join("\n")}\n`);
    // GNU grep is the oracle, its `N:` and `N-` prefixed with the path as grep -r would.
    const gnu = execFileSync("grep", ["-n", "-C", "2", "-E", "hit [0-9]+ here", join(ws, "big.txt")], {
      encoding: "utf8",
    })
      .trimEnd()
      .split("\n")
      .map((line) => (line === "--" ? line : `big.txt${line.replace(/^(\d+)([:-])/, "$2$1$2")}`));
    expect(gnu.length).toBeGreaterThan(40);
    expect(await grepLines({ pattern: "hit [0-9]+ here", context: 2 })).toEqual(gnu);
    expect(await grepLines({ pattern: "hit 80000 here" })).toEqual([]);
    expect(await grepLines({ pattern: "hit 87109 here" })).toEqual(["big.txt:87110:hit 87109 here"]);
  });

  it("finds a match inside a line longer than a read, and the line after it", async () => {
    const long = `${"x".repeat(3 * 1024 * 1024)}needle${"y".repeat(1000)}`;
    await t.write("ws/minified.js", `first\n${long}\nneedle after\n`);
    const found = await grepLines({ pattern: "needle" });
    expect(found).toEqual([
      `minified.js:2:${"x".repeat(300)}… [line cut at 300 characters]`,
      "minified.js:3:needle after",
    ]);
  });
});

describe("a file's output fed in pieces", () => {
  it("is the same wherever the pieces are cut, with context lines crossing the cuts", () => {
    const lines = Array.from({ length: 60 }, (_, i) =>
      [3, 4, 9, 17, 30, 31, 35, 58].includes(i) ? `hit ${i}` : `l${i}`,
    );
    const matcher = compileLineMatcher("hit", false);
    const output = (pieces: string[], context: number) => {
      const out: OutputLine[] = [];
      const file = new MatchLines(
        () => "f",
        matcher,
        context,
        (line) => out.push(line) > 0,
      );
      for (const piece of pieces) file.text(piece);
      return out;
    };
    for (const context of [0, 1, 2, 3]) {
      const whole = output([`${lines.join("\n")}\n`], context);
      expect(whole.filter((line) => line.match)).toHaveLength(8);
      for (let cut = 0; cut <= lines.length; cut++) {
        const pieces = [lines.slice(0, cut), lines.slice(cut)].map((part) =>
          part.length === 0 ? "" : `${part.join("\n")}\n`,
        );
        expect(output(pieces, context), `context ${context}, cut at ${cut}`).toEqual(whole);
      }
    }
  });
});
