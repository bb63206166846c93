import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { MINIMAL, type PodTools, podTools, type tempRoot, workspaceTools } from "./helpers.js";

let t: Awaited<ReturnType<typeof tempRoot>>;
let ws: string;
let tools: PodTools;

beforeEach(async () => {
  ({ t, ws, tools } = await workspaceTools("write"));
});

describe("read_file", () => {
  it("numbers lines and pages with offset and limit", async () => {
    await t.write("ws/a.txt", Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const page = await tools.call("read_file", { path: "a.txt", offset: 3, limit: 2 });
    expect(page.summary).toBe("a.txt: lines 3-4 of 10; 6 more — continue with offset 5");
    expect(page.content).toBe("     3\tline 3\n     4\tline 4");
  });

  it("refuses a binary file with a note and shows none of it", async () => {
    await writeFile(join(ws, "bin.dat"), Buffer.from([0x50, 0x4b, 0x00, 0x01, 0x41, 0x42]));
    const result = await tools.call("read_file", { path: "bin.dat" });
    expect(result.is_error).toBe(true);
    expect(result.summary).toContain("binary file");
    expect(result.content).toBeUndefined();
  });

  it("stops at the output budget and says where to continue", async () => {
    await t.write("ws/big.txt", Array.from({ length: 5000 }, () => "x".repeat(100)).join("\n"));
    const result = await tools.call("read_file", { path: "big.txt" });
    expect(Buffer.byteLength(result.content ?? "")).toBeLessThanOrEqual(48 * 1024);
    expect(result.summary).toMatch(/continue with offset \d+/);
  });
});

describe("edit_file", () => {
  it("replaces exactly one match", async () => {
    await t.write("ws/e.ts", "const a = 1;\nconst b = 2;\n");
    const result = await tools.call("edit_file", {
      path: "e.ts",
      old_string: "const b = 2;",
      new_string: "const b = 3;",
    });
    expect(result.is_error).toBeUndefined();
    expect(await readFile(join(ws, "e.ts"), "utf8")).toBe("const a = 1;\nconst b = 3;\n");
  });

  it("with zero matches changes nothing and shows the nearby text where the copy diverged", async () => {
    const before = "function f() {\n  return 1;\n}\n";
    await t.write("ws/e.ts", before);
    const result = await tools.call("edit_file", {
      path: "e.ts",
      old_string: "function f() {\n  return 2;\n}",
      new_string: "x",
    });
    expect(result.is_error).toBe(true);
    expect(result.summary).toContain("old_string was not found in e.ts; the file is unchanged");
    expect(result.summary).toContain("match at line 1");
    expect(result.summary).toContain("     2\t  return 1;");
    expect(await readFile(join(ws, "e.ts"), "utf8")).toBe(before);
  });

  it("with several matches changes nothing, says how many and where, unless replace_all", async () => {
    const before = "x = 1\ny = 2\nx = 1\n";
    await t.write("ws/e.txt", before);
    const result = await tools.call("edit_file", { path: "e.txt", old_string: "x = 1", new_string: "x = 9" });
    expect(result.is_error).toBe(true);
    expect(result.summary).toContain("occurs 2 times in e.txt (lines 1, 3); the file is unchanged");
    expect(await readFile(join(ws, "e.txt"), "utf8")).toBe(before);

    const all = await tools.call("edit_file", {
      path: "e.txt",
      old_string: "x = 1",
      new_string: "x = 9",
      replace_all: true,
    });
    expect(all.summary).toContain("replaced 2 occurrences");
    expect(await readFile(join(ws, "e.txt"), "utf8")).toBe("x = 9\ny = 2\nx = 9\n");
  });
});

describe("write_file", () => {
  it("creates parent directories", async () => {
    const result = await tools.call("write_file", { path: "deep/new/file.txt", content: "hello" });
    expect(result.summary).toBe("wrote 5 bytes to deep/new/file.txt");
    expect(await readFile(join(ws, "deep/new/file.txt"), "utf8")).toBe("hello");
  });

  it("is atomic: a reader in another process never sees a half-written file", async () => {
    const file = join(ws, "atomic.txt");
    const sizes = [4 * 1024 * 1024, 6 * 1024 * 1024];
    const contents = sizes.map((n, i) => String(i).repeat(n));
    await writeFile(file, contents[0] as string);

    /** Reads `file` in a loop in a child process until told to stop; reports every length seen. */
    const watch = async (writer: () => Promise<void>) => {
      const child = spawn(
        process.execPath,
        [
          "-e",
          `const fs=require("fs");const seen=new Set();process.stdin.on("data",()=>{process.stdout.write(JSON.stringify([...seen]));process.exit(0)});
           (function loop(){for(let i=0;i<20;i++){try{seen.add(fs.readFileSync(${JSON.stringify(file)}).length)}catch(e){seen.add(-1)}}setImmediate(loop)})();process.stdout.write("ready\\n");`,
        ],
        { stdio: ["pipe", "pipe", "inherit"] },
      );
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
      });
      while (!out.includes("ready")) await new Promise((r) => setTimeout(r, 5));
      await writer();
      const done = new Promise((r) => child.on("exit", r));
      child.stdin.write("stop\n");
      await done;
      return JSON.parse(out.slice(out.indexOf("ready") + 6)) as number[];
    };

    // Positive control: a plain overwrite is seen half-written (truncated or partly filled).
    let partial = false;
    for (let attempt = 0; attempt < 5 && !partial; attempt++) {
      const seen = await watch(async () => {
        for (let i = 0; i < 10; i++) await writeFile(file, contents[i % 2] as string);
      });
      partial = seen.some((n) => !sizes.includes(n));
    }
    expect(partial).toBe(true);

    const seen = await watch(async () => {
      for (let i = 0; i < 10; i++) {
        const result = await tools.call("write_file", {
          path: "atomic.txt",
          content: contents[i % 2] as string,
        });
        expect(result.is_error).toBeUndefined();
      }
    });
    expect(
      seen.every((n) => sizes.includes(n)),
      `lengths seen: ${seen}`,
    ).toBe(true);
  });
});

describe("glob and grep", () => {
  beforeEach(async () => {
    await t.write("ws/.gitignore", "build/\n*.log\n");
    await t.write("ws/src/.gitignore", "generated.ts\n");
    await t.write(
      "ws/src/a.ts",
      "export const alpha = 1;\n// TODO first\nconst x = 2;\nconst y = 3;\n// todo second\n",
    );
    await t.write("ws/src/generated.ts", "// TODO generated\n");
    await t.write("ws/src/b.js", "// TODO in js\n");
    await t.write("ws/build/out.ts", "// TODO built\n");
    await t.write("ws/debug.log", "TODO log\n");
    await t.write("ws/.git/config", "TODO git\n");
  });

  it("glob matches with picomatch and respects .gitignore at every level", async () => {
    const result = await tools.call("glob", { pattern: "**/*.ts" });
    expect(result.content).toBe("src/a.ts");
    const js = await tools.call("glob", { pattern: "*.{js,ts}", path: "src" });
    expect(js.content?.split("\n")).toEqual(["src/a.ts", "src/b.js"]);
  });

  it("grep finds regex matches with include patterns, context lines and case folding", async () => {
    const plain = await tools.call("grep", { pattern: "TODO" });
    expect(plain.content?.split("\n")).toEqual(["src/a.ts:2:// TODO first", "src/b.js:1:// TODO in js"]);

    const folded = await tools.call("grep", {
      pattern: "todo \\w+",
      include: ["*.ts"],
      case_insensitive: true,
      context: 1,
    });
    expect(folded.content?.split("\n")).toEqual([
      "src/a.ts-1-export const alpha = 1;",
      "src/a.ts:2:// TODO first",
      "src/a.ts-3-const x = 2;",
      "src/a.ts-4-const y = 3;",
      "src/a.ts:5:// todo second",
    ]);
    expect(folded.summary).toBe("2 matches in 1 file under .");
    // Groups that do not touch are separated by "--".
    const apart = await tools.call("grep", { pattern: "alpha|second", path: "src/a.ts", context: 1 });
    expect(apart.content?.split("\n")).toEqual([
      "src/a.ts:1:export const alpha = 1;",
      "src/a.ts-2-// TODO first",
      "--",
      "src/a.ts-4-const y = 3;",
      "src/a.ts:5:// todo second",
    ]);
  });

  it("grep stops at the result limit and says so; a bad regex is an error", async () => {
    await t.write("ws/many.txt", Array.from({ length: 50 }, (_, i) => `hit ${i}`).join("\n"));
    const limited = await tools.call("grep", { pattern: "^hit", limit: 5 });
    expect(limited.content?.split("\n")).toHaveLength(5);
    expect(limited.summary).toContain("stopped at 5 matches");
    const bad = await tools.call("grep", { pattern: "(" });
    expect(bad.is_error).toBe(true);
    expect(bad.summary).toContain("invalid regular expression");
  });
});

describe("output caps", () => {
  it("the tools stop under the manifest's per-tool cap and say so, instead of being cut by the worker", async () => {
    const manifest = await t.write(
      "ws/capped.toml",
      `${MINIMAL}[worker.tool_output]\nper_tool = { grep = 4096, read_file = 2048 }\n[[scope.allow]]\ntarget = "."\npermission = "read"\n`,
    );
    const capped = await podTools(manifest, ws);
    await t.write("ws/many.txt", Array.from({ length: 2000 }, (_, i) => `match number ${i}`).join("\n"));
    const grep = await capped.call("grep", { pattern: "match", limit: 5000 });
    expect(Buffer.byteLength(grep.content ?? "")).toBeLessThanOrEqual(4096 - 512);
    expect(grep.summary).toContain("output cut at the size budget");
    const read = await capped.call("read_file", { path: "many.txt" });
    expect(Buffer.byteLength(read.content ?? "")).toBeLessThanOrEqual(2048 - 512);
    expect(read.summary).toMatch(/continue with offset \d+/);
  });
});
