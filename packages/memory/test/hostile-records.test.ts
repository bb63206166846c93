import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Tool } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { parse as stockParse } from "yaml";
import { runMemoryConsolidation } from "../src/consolidate/run-consolidation.js";
import { MEMORY_FILE_MAX_BYTES } from "../src/store/contained-read.js";
import { MemoryStore } from "../src/store/memory-store.js";
import { consolidationTools } from "../src/tools/memory-tools.js";
import { lintWorkspaceMemory, queryWorkspaceMemory } from "../src/workspace-api.js";
import { clock, record, say, stagingFiles, useMemoryWorlds, useTempDirs, writeFiles } from "./helpers.js";

// A cloned repository can ship any record file. Each file of this corpus must come back as a lint
// error naming the file and line, or a refusal — within a second, without an exception of a
// foreign kind, without changing a prototype, and without taking the rest of memory down. Each is
// tried on disk and through memory_write. "Within a second" is CPU time: that is what a hostile
// file can make the parser spend, and unlike wall time a busy machine does not stretch it.
const tempDir = useTempDirs();
const world = useMemoryWorlds();

const FIELDS = "created_at: 2026-04-01T10:00:00Z\nupdated_at: 2026-04-01T10:00:00Z\nstatus: open";
const SOURCES = "sources: [{segment_id: seg-0, range: [1, 2]}]";
/** The CPU milliseconds (user + system) this process spent since `since` (a `process.cpuUsage()`). */
const cpuMsSince = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

const hostile = (frontmatter: string, body = "Body.") => `---\n${frontmatter}\n---\n\n${body}\n`;

const aliasBomb = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
].join("\n");

interface Case {
  readonly name: string;
  /** The file as it lies on disk. */
  readonly bytes: Buffer;
  /** What the linter reports: an error (with its code and line), or a refusal warning. */
  readonly expect: { severity: "error" | "warning"; code: string; line?: number; message: RegExp };
  /** Read as a record all the same (only CRLF and a BOM): what the linter notes is a warning. */
  readonly readable?: boolean;
}

const text = (name: string, content: string, expectation: Case["expect"], readable = false): Case => ({
  name,
  bytes: Buffer.from(content, "utf8"),
  expect: expectation,
  readable,
});

const CORPUS: Case[] = [
  text("an alias bomb", hostile(`${FIELDS}\n${SOURCES}\n${aliasBomb}`), {
    severity: "error",
    code: "frontmatter",
    line: 6,
    message: /anchors \(&a\) are not allowed/,
  }),
  text(
    "a huge anchor used many times",
    hostile(
      `${FIELDS}\n${SOURCES}\nbig: &big "${"x".repeat(60_000)}"\nuse: [${Array(50).fill("*big").join(", ")}]`,
    ),
    { severity: "error", code: "frontmatter", line: 6, message: /anchors \(&big\)/ },
  ),
  text("an alias without its anchor", hostile(`${FIELDS}\n${SOURCES}\nuse: *nowhere`), {
    severity: "error",
    code: "frontmatter",
    message: /not valid YAML|aliases/,
  }),
  text(
    "deep flow nesting",
    hostile(`${FIELDS}\n${SOURCES}\ndeep: ${"[".repeat(20_000)}${"]".repeat(20_000)}`),
    {
      severity: "error",
      code: "frontmatter",
      line: 6,
      message: /nested deeper than 8 levels/,
    },
  ),
  text(
    "deep block nesting",
    hostile(
      `${FIELDS}\n${SOURCES}\n${Array.from({ length: 40 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n")} v`,
    ),
    { severity: "error", code: "frontmatter", message: /nested deeper than 8 levels/ },
  ),
  text(
    "a custom tag",
    hostile(`${FIELDS.replace("status: open", 'status: !js/function "open"')}\n${SOURCES}`),
    {
      severity: "error",
      code: "frontmatter",
      line: 4,
      message: /tags \(!js\/function\) are not allowed/,
    },
  ),
  text("a binary tag", hostile(`${FIELDS}\n${SOURCES}\nblob: !!binary aGVsbG8=`), {
    severity: "error",
    code: "frontmatter",
    line: 6,
    message: /tags .* are not allowed/,
  }),
  text("a __proto__ key", hostile(`${FIELDS}\n${SOURCES}\n__proto__: {polluted: true}`), {
    severity: "error",
    code: "frontmatter",
    line: 6,
    message: /"__proto__" is not allowed/,
  }),
  {
    name: "a lone surrogate (CESU-8 bytes, not UTF-8)",
    bytes: Buffer.concat([
      Buffer.from(`${hostile(`${FIELDS}\n${SOURCES}`, "fine").trimEnd()}\nbroken `, "utf8"),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from(" here\n"),
    ]),
    expect: { severity: "error", code: "encoding", line: 9, message: /not UTF-8/ },
  },
  text("a 3 MB body", hostile(`${FIELDS}\n${SOURCES}`, "x".repeat(3 * 1024 * 1024)), {
    severity: "warning",
    code: "refused",
    message: new RegExp(`more than the ${MEMORY_FILE_MAX_BYTES}`),
  }),
  text(
    "a frontmatter of 100,000 characters",
    hostile(`${FIELDS}\n${SOURCES}\nnote: "${"n".repeat(100_000)}"`),
    {
      severity: "error",
      code: "frontmatter",
      message: /more than the 65536/,
    },
  ),
  text(
    "CRLF line ends",
    hostile(`${FIELDS}\n${SOURCES}`, "Line one.\nLine two.").replaceAll("\n", "\r\n"),
    { severity: "warning", code: "encoding", line: 1, message: /CRLF/ },
    true,
  ),
  text(
    "a byte order mark",
    `\uFEFF${hostile(`${FIELDS}\n${SOURCES}`)}`,
    { severity: "warning", code: "encoding", line: 1, message: /byte order mark/ },
    true,
  ),
];

/** Everything Object.prototype holds, to see it unchanged. */
const prototypeShape = () => JSON.stringify(Object.getOwnPropertyNames(Object.prototype).sort());
const SHAPE = prototypeShape();
const GOOD = record(`${FIELDS}\n${SOURCES}`, "Use pnpm workspaces: npm hoisting broke builds.");
const call = (tool: Tool | undefined, args: Record<string, unknown>) =>
  (tool as Tool).execute(args, { signal: new AbortController().signal, callId: "c" });

describe("the stock parser falls to these files (positive controls)", () => {
  it("an alias bomb makes yaml throw a foreign ReferenceError; a __proto__ key set by assignment changes a prototype", () => {
    const frontmatter = aliasBomb;
    expect(() => stockParse(frontmatter)).toThrow(ReferenceError);
    const target: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(JSON.parse('{"__proto__": {"polluted": true}}')))
      target[key] = value;
    expect((target as { polluted?: boolean }).polluted).toBe(true);
  });
});

describe("hostile record files on disk", () => {
  for (const c of CORPUS) {
    it(`${c.name}: reported within a second of CPU, the rest of memory intact`, async () => {
      const workspace = await tempDir("hostile");
      await writeFiles(workspace, { ".podkit/memory/decisions/use-pnpm.md": GOOD });
      await writeFile(join(workspace, ".podkit/memory/decisions/hostile.md"), c.bytes);
      const started = process.cpuUsage();
      const store = await MemoryStore.open(workspace, { clock });
      const report = await lintWorkspaceMemory(workspace);
      expect(cpuMsSince(started)).toBeLessThan(1000);

      const found = [...report.errors, ...report.warnings].filter(
        (d) => d.record === ".podkit/memory/decisions/hostile.md",
      );
      expect(found[0]).toMatchObject({
        severity: c.expect.severity,
        code: c.expect.code,
        ...(c.expect.line === undefined ? {} : { line: c.expect.line }),
      });
      expect(found[0]?.message).toMatch(c.expect.message);
      expect(store.get("decision", "hostile") !== undefined).toBe(c.readable === true);
      // The rest of memory works: the good record loads, is found, and the tree has no other error.
      expect(store.get("decision", "use-pnpm")).toBeDefined();
      expect((await queryWorkspaceMemory(workspace, { query: "hoisting" })).map((h) => h.slug)).toEqual([
        "use-pnpm",
      ]);
      expect(report.errors.filter((d) => d.record !== ".podkit/memory/decisions/hostile.md")).toEqual([]);
      expect(prototypeShape()).toBe(SHAPE);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });
  }

  it("a consolidation over a tree holding every one of them runs, and writes the readable ones back as plain UTF-8 with LF", async () => {
    const files: Record<string, string> = {
      ".podkit/memory/decisions/use-pnpm.md": GOOD,
      ".podkit/memory/_staging/a.json": JSON.stringify({
        id: "a",
        created_at: "2026-04-15T09:00:00Z",
        session_id: "s1",
        source: { segment_id: "seg-1", range: [1, 4] },
        decisions: [{ topic: "pnpm workspace layout", decision: "Keep pnpm", reason: "it works" }],
        discussions: [],
        attempts: [],
        requests: [],
      }),
    };
    const w = await world({
      files: Object.fromEntries(Object.entries(files).map(([k, v]) => [`project/${k}`, v])),
    });
    for (const [i, c] of CORPUS.entries())
      await writeFile(join(w.workspace, `.podkit/memory/decisions/hostile-${i}.md`), c.bytes);
    w.double.enqueue(
      {
        parts: [
          {
            type: "tool_call",
            name: "memory_edit",
            arguments: {
              kind: "decision",
              slug: `hostile-${CORPUS.findIndex((c) => c.name === "CRLF line ends")}`,
              old_text: "Line two.",
              new_text: "Line 2.",
              reason: "r",
              staged: ["s1-d1"],
            },
          },
        ],
        finishReason: "tool_calls",
      },
      say("Integrated."),
      say("Nothing to tidy."),
    );
    const result = await runMemoryConsolidation({ ...w.job(), force: true });
    expect(result).toMatchObject({ status: "consolidated", tidy: { status: "done" } });
    expect(JSON.stringify(w.double.requests[1]?.body.messages.at(-1))).not.toContain("is_error");
    const crlf = await readFile(
      join(
        w.workspace,
        `.podkit/memory/decisions/hostile-${CORPUS.findIndex((c) => c.name === "CRLF line ends")}.md`,
      ),
      "utf8",
    );
    expect(crlf).not.toContain("\r");
    expect(crlf).toContain("Line 2.");
    expect(await stagingFiles(w.workspace)).toEqual([]);
    expect(prototypeShape()).toBe(SHAPE);
  });
});

describe("hostile record files through memory_write", () => {
  for (const c of CORPUS) {
    it(`${c.name}: refused (or written canonically) within a second of CPU, nothing else changed`, async () => {
      const workspace = await tempDir("hostile-write");
      await writeFiles(workspace, { ".podkit/memory/decisions/use-pnpm.md": GOOD });
      const store = await MemoryStore.open(workspace, { clock });
      const write = consolidationTools(store).find((t) => t.name === "memory_write");
      // A tool call carries a string: the CESU case as the lone surrogate a JSON string can hold.
      const content =
        c.expect.code === "encoding" && !c.readable
          ? hostile(`${FIELDS}\n${SOURCES}`, "broken \uD800 here")
          : c.bytes.toString("utf8");
      const started = process.cpuUsage();
      const out = await call(write, { kind: "decision", slug: "hostile", content, reason: "r" });
      expect(cpuMsSince(started)).toBeLessThan(1000);
      const file = join(workspace, ".podkit/memory/decisions/hostile.md");
      if (c.readable === true) {
        expect(out.is_error).toBeUndefined();
        const written = await readFile(file, "utf8");
        expect(written.startsWith("---\n")).toBe(true);
        expect(written).not.toContain("\r");
      } else {
        expect(out.is_error).toBe(true);
        expect(out.summary).toContain(".podkit/memory/decisions/hostile.md");
        expect(existsSync(file)).toBe(false);
        expect(out.summary).toMatch(c.expect.code === "encoding" ? /U\+D800/ : c.expect.message);
        // The line of the text the writer sent (the surrogate case sends its own, shorter text).
        const line = c.expect.code === "encoding" ? 8 : c.expect.line;
        if (line !== undefined) expect(out.summary).toContain(`hostile.md:${line}`);
      }
      expect(store.get("decision", "use-pnpm")).toBeDefined();
      expect(prototypeShape()).toBe(SHAPE);
    });
  }
});
