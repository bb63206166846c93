import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(path)));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

// One way to build a model adapter from [model]: the pod's. The memory commands and the demo get
// theirs from @podkit/pod's `podModelAdapter` (what `Pod` and `pod.modelAdapter` use), so base_url,
// api_key_env and the pod's overrides are read in one place.
describe("the CLI builds no model adapter of its own", () => {
  it("no CLI source calls llm-worker's createModelAdapter or adapterFromModel", async () => {
    const files = await sources(SRC);
    expect(files.length).toBeGreaterThan(20);
    const builders: string[] = [];
    for (const file of files) {
      const text = await readFile(file, "utf8");
      if (/\b(createModelAdapter|adapterFromModel)\b/.test(text)) builders.push(file.slice(SRC.length + 1));
    }
    expect(builders).toEqual([]);
  });

  it("the memory commands and the demo use the pod's function", async () => {
    for (const file of ["actions/memory.ts", "demo/run-demo.ts"]) {
      expect(await readFile(join(SRC, file), "utf8"), file).toMatch(/\bpodModelAdapter\(/);
    }
  });
});
