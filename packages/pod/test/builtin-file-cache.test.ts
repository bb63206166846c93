import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { builtinPromptsDir } from "../src/builtin-resources.js";
import { PromptCatalog } from "../src/catalog/prompt-catalog.js";
import { readBuiltinOnce } from "../src/prompt-ref/builtin-file-cache.js";

describe("builtin prompt files are read once per process", () => {
  it("a file of the package's own prompts is read once; any other file every time; a failed read is retried", async () => {
    let reads = 0;
    const read = async () => {
      reads += 1;
      return "text";
    };
    const builtin = join(builtinPromptsDir(), "cache-probe.md");
    await readBuiltinOnce(builtin, read);
    await readBuiltinOnce(builtin, read);
    expect(reads).toBe(1);
    // Positive control: a workspace's prompt (or a builtin directory given as an override) is read each time.
    const elsewhere = join(builtinPromptsDir(), "..", "prompts-elsewhere", "x.md");
    await readBuiltinOnce(elsewhere, read);
    await readBuiltinOnce(elsewhere, read);
    expect(reads).toBe(3);
    const failing = join(builtinPromptsDir(), "failing-probe.md");
    await expect(readBuiltinOnce(failing, () => Promise.reject(new Error("EIO")))).rejects.toThrow("EIO");
    await expect(readBuiltinOnce(failing, read)).resolves.toBe("text");
  });

  it("a catalog loaded again renders the same prompts from the cached files", async () => {
    const first = await PromptCatalog.loadBuiltinOnly();
    const second = await PromptCatalog.loadBuiltinOnly();
    for (const { key } of first.entries()) expect(second.explain(key).source).toBe(first.explain(key).source);
  });
});
