import { spawnSync } from "node:child_process";
import { copyFile, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../test/helpers.js";

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const repoDir = resolve(packageDir, "../..");
const tsc = createRequire(join(repoDir, "package.json")).resolve("typescript/bin/tsc");
const tempDir = useTempDirs();

function run(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, args, { cwd, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/**
 * A copy of the package's build inputs for the coverage check (generator script, PodPrompt,
 * the coverage assertion) laid out like the repository, with `internal.toml` replaced.
 */
async function brokenCopy(internalToml: string): Promise<string> {
  const root = await tempDir("coverage");
  const pkg = join(root, "packages", "pod");
  await mkdir(join(pkg, "scripts"), { recursive: true });
  await mkdir(join(pkg, "src", "catalog"), { recursive: true });
  await mkdir(join(root, "resources", "prompts"), { recursive: true });
  await copyFile(join(packageDir, "scripts/gen-prompt-keys.mjs"), join(pkg, "scripts/gen-prompt-keys.mjs"));
  for (const file of ["pod-prompt.ts", "builtin-pack-coverage.ts"]) {
    await copyFile(join(packageDir, "src/catalog", file), join(pkg, "src/catalog", file));
  }
  await symlink(join(packageDir, "node_modules"), join(pkg, "node_modules"));
  await writeFile(join(root, "resources/prompts/internal.toml"), internalToml);
  await writeFile(join(pkg, "package.json"), JSON.stringify({ type: "module" }));
  await writeFile(
    join(pkg, "tsconfig.json"),
    JSON.stringify({
      extends: join(repoDir, "tsconfig.base.json"),
      compilerOptions: {
        rootDir: "src",
        noEmit: true,
        composite: false,
        declaration: false,
        declarationMap: false,
        typeRoots: [join(repoDir, "node_modules/@types")],
      },
      include: ["src"],
    }),
  );
  return pkg;
}

/** Runs the package's build steps (generator, then tsc) on the copy. */
function build(pkg: string) {
  const generated = run(["scripts/gen-prompt-keys.mjs"], pkg);
  if (generated.status !== 0) return generated;
  return run([tsc, "-p", "tsconfig.json", "--pretty", "false"], pkg);
}

async function realInternalToml(): Promise<string> {
  return readFile(join(repoDir, "resources/prompts/internal.toml"), "utf8");
}

describe("[31] the build enforces builtin pack coverage", () => {
  it("passes with the real internal.toml", async () => {
    const result = build(await brokenCopy(await realInternalToml()));
    expect(result.output).toBe("");
    expect(result.status).toBe(0);
  });

  it("fails when internal.toml lacks a PodPrompt key", async () => {
    const toml = (await realInternalToml()).replace(/^resident_memory_section = """[\s\S]*?"""$/m, "");
    expect(toml).not.toContain("resident_memory_section");
    const result = build(await brokenCopy(toml));
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("internal.toml lacks the PodPrompt key: resident_memory_section");
  });

  it("fails when internal.toml has a key that PodPrompt lacks", async () => {
    const toml = `${await realInternalToml()}\nsurplus_prompt = "nobody renders me"\n`;
    const result = build(await brokenCopy(toml));
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("internal.toml has a key that PodPrompt lacks: surplus_prompt");
  });

  it("fails with file and line when internal.toml is not valid TOML", async () => {
    const result = build(await brokenCopy('[prompt]\nnotify_wrapper = "unterminated\n'));
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/gen-prompt-keys: .*internal\.toml:2:\d+: /);
  });
});

describe("catalog.render is type-checked", () => {
  it("tsc rejects wrong contexts and unknown keys, and accepts the right ones", async () => {
    const dir = await tempDir("types");
    const calls = [
      'c.render("notify_wrapper", {});',
      'c.render("notify_wrapper", { message: 1 });',
      'c.render("no_such_prompt", {});',
      'c.render("agents_md_section");',
      'c.render("notify_wrapper", { message: "x", extra: 1 });',
      'c.render("interrupt_system_note");',
      'c.render("interrupt_tool_result_summary");',
      'c.render("interrupt_system_note", { trigger: "resume" });',
    ];
    const source = [
      `import type { PromptCatalog } from ${JSON.stringify(join(packageDir, "dist/index.js"))};`,
      "export function check(c: PromptCatalog): void {",
      ...calls.map((call) => `  ${call}`),
      "}",
      "",
    ].join("\n");
    await writeFile(join(dir, "check.ts"), source);
    const result = run(
      [
        tsc,
        "--noEmit",
        "--strict",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--skipLibCheck",
        "--types",
        "node",
        "--typeRoots",
        join(repoDir, "node_modules/@types"),
        "--pretty",
        "false",
        "check.ts",
      ],
      dir,
    );
    expect(result.status).not.toBe(0);
    const errorLines = [...result.output.matchAll(/check\.ts\((\d+),\d+\): error TS\d+/g)].map((m) =>
      Number(m[1]),
    );
    // The six wrong calls (the interrupt note needs its trigger), not the two right ones.
    expect([...new Set(errorLines)]).toEqual([3, 4, 5, 6, 7, 8]);
  });
});
