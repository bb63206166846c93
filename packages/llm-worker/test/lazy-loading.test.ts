import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const DIST = pathToFileURL(join(import.meta.dirname, "../dist/index.js")).href;
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs `body` in a fresh Node process that logs every `@ai-sdk/*` module it resolves. */
async function resolvedProviderModules(body: string): Promise<string[]> {
  dir = await mkdtemp(join(tmpdir(), "podkit-llm-worker-lazy-"));
  await writeFile(
    join(dir, "hooks.mjs"),
    `export async function resolve(specifier, context, next) {
      if (specifier.startsWith("@ai-sdk/")) process.stderr.write("RESOLVE " + specifier + "\\n");
      return next(specifier, context);
    }`,
  );
  await writeFile(
    join(dir, "main.mjs"),
    `import { register } from "node:module";
     register(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});
     const { createModelAdapter } = await import(${JSON.stringify(DIST)});
     ${body}`,
  );
  const { stderr } = await promisify(execFile)(process.execPath, [join(dir, "main.mjs")]);
  return [
    ...new Set(
      stderr
        .split("\n")
        .filter((l) => l.startsWith("RESOLVE "))
        .map((l) => l.slice(8)),
    ),
  ].sort();
}

describe("provider packages load lazily", () => {
  it("creating adapters for every provider imports no provider package", async () => {
    const modules = await resolvedProviderModules(`
      for (const ref of ["anthropic/a", "openai/b", "openai-chat/c", "google/d", "ollama/e"]) createModelAdapter(ref, { apiKey: "k" });
      createModelAdapter("openai-compatible/f", { baseUrl: "http://127.0.0.1:1/v1" });`);
    expect(modules).toEqual(["@ai-sdk/provider"]);
  });

  it("the first use imports only the package of that provider", async () => {
    const modules = await resolvedProviderModules(
      `await createModelAdapter("google/gemini-2.5-flash", { apiKey: "k" }).load();`,
    );
    expect(modules).toEqual(["@ai-sdk/google", "@ai-sdk/provider", "@ai-sdk/provider-utils"]);
  });
});
