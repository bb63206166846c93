import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT, runBin } from "./run-bin.js";

let root: string;
let env: Record<string, string>;

async function write(rel: string, content: string): Promise<string> {
  const file = join(root, rel);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, content);
  return file;
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-")));
  env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "xdg") };
  await mkdir(join(root, "home"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const POD = `[pod]
name = "docs-bot"

[model]
ref = "openai/gpt-4o"

[worker]
max_turns = 12

[[scope.allow]]
target = "."
permission = "read"

[[scope.allow]]
target = "out"
permission = "write"
recursive = false
`;

describe("podkit manifest show", () => {
  it("prints the resolved manifest with the layer and line that set each value, and the scope summary", async () => {
    await write("xdg/podkit/manifest.toml", '[worker]\nlanguage = "Deutsch"\n');
    await write("proj/.podkit/manifest.toml", "[worker]\nmax_tokens = 1024\n");
    await write("proj/pods/docs.toml", POD);
    const result = await runBin(["manifest", "show", "pods/docs.toml", "--set", "worker.temperature=0.3"], {
      cwd: join(root, "proj"),
      env,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain('Pod "docs-bot" from pods/docs.toml');
    expect(out).toContain(`Workspace: ${join(root, "proj")} (nearest directory holding .podkit/)`);
    expect(out).toContain(
      `  user      ${root}/xdg/podkit/manifest.toml\n  workspace .podkit/manifest.toml\n  file      pods/docs.toml\n`,
    );
    expect(out).toMatch(/^name = "docs-bot" +# file:2$/m);
    expect(out).toMatch(/^language = "Deutsch" +# user:2$/m);
    expect(out).toMatch(/^max_tokens = 1024 +# workspace:2$/m);
    expect(out).toMatch(/^max_turns = 12 +# file:8$/m);
    expect(out).toMatch(/^temperature = 0\.3 +# --set worker\.temperature=0\.3$/m);
    expect(out).toMatch(/^system_prompt = "\{% include \\"\$podkit\/default\\" %\}" +# builtin$/m);
    const pods = join(root, "proj/pods");
    expect(out).toContain(
      `Scope (canonical paths; this summary is what the system prompt shows):\n  Readable:\n    - ${pods}\n    - ${pods}/out [non-recursive]\n  Writable:\n    - ${pods}/out [non-recursive]\n`,
    );
    expect(out).toContain("Model: openai/gpt-4o; API key from $OPENAI_API_KEY: not set");
  });

  it("prints machine-readable JSON with --json", async () => {
    const file = await write("proj/pod.toml", POD);
    const result = await runBin(["manifest", "show", file, "--json", "--set", "pod.name=renamed"], {
      cwd: root,
      env,
    });
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.file).toBe(file);
    expect(json.manifest.pod.name).toBe("renamed");
    expect(json.manifest.model).toEqual({
      ref: "openai/gpt-4o",
      api_key_env: "OPENAI_API_KEY",
      context_window: 128000,
    });
    expect(json.provenance["pod.name"]).toEqual({
      layer: "set",
      overlay: "pod.name=renamed",
      keyPath: "pod.name",
    });
    expect(json.provenance["worker.max_turns"]).toEqual({
      layer: "file",
      file,
      line: 8,
      keyPath: "worker.max_turns",
    });
    expect(json.scope.writable).toEqual([join(root, "proj/out")]);
    expect(json.layers.map((l: { kind: string }) => l.kind)).toEqual([
      "builtin",
      "user",
      "workspace",
      "file",
      "set",
    ]);
  });

  it("shows the workspace manifest when no file is given, found from a subdirectory", async () => {
    await write("proj/.podkit/manifest.toml", POD);
    await mkdir(join(root, "proj/src/deep"), { recursive: true });
    const result = await runBin(["manifest", "show"], { cwd: join(root, "proj/src/deep"), env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Pod "docs-bot" from workspace manifest');
    expect(result.stdout).toMatch(/^name = "docs-bot" +# workspace:2$/m);
    expect(result.stdout).toContain(`    - ${join(root, "proj/.podkit")}\n`);
  });

  it("fails with one error line and a hint when there is no manifest at all", async () => {
    const result = await runBin(["manifest", "show"], { cwd: root, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `error: no manifest file given, and ${root}/.podkit/manifest.toml does not exist\nhint: pass one (podkit manifest show path/to/manifest.toml) or create .podkit/manifest.toml in the workspace\n`,
    );
  });

  it("reports a malformed manifest by file, line and key without a stack trace", async () => {
    await write("bad.toml", `${POD}\n[worker.tool_output]\ndefault_max_bytes = "lots"\n`);
    const result = await runBin(["manifest", "show", "bad.toml"], { cwd: root, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: bad.toml:20: worker.tool_output.default_max_bytes: expected an integer, got "lots"\nhint: fix the key shown; every key, its type and default are in podkit's docs/manifest.md\n`,
    );
  });

  it("prints the stack trace of an error only with --debug", async () => {
    await write("bad.toml", '[pod]\nname = "x\n');
    const plain = await runBin(["manifest", "show", "bad.toml"], { cwd: root, env });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain("error: bad.toml:2:10: TOML syntax error:");
    expect(plain.stderr).toContain('  2 | name = "x');
    expect(plain.stderr).not.toMatch(/^\s+at /m);
    const debug = await runBin(["--debug", "manifest", "show", "bad.toml"], { cwd: root, env });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^\s+at .*manifest/m);
    expect(debug.stderr).toContain("Caused by:");
  });

  it("runs the shipped reviewer example from the repository root without an API key", async () => {
    const result = await runBin(["manifest", "show", "examples/reviewer/manifest.toml"], {
      cwd: REPO_ROOT,
      env,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const repo = await realpath(REPO_ROOT);
    expect(result.stdout).toContain('Pod "reviewer" from examples/reviewer/manifest.toml');
    expect(result.stdout).toMatch(/^ref = "anthropic\/claude-sonnet-4-5" +# file:\d+$/m);
    expect(result.stdout).toContain(
      `  Readable:\n    - ${repo}\n    - ${repo}/examples/reviewer/reviews\n  Writable:\n    - ${repo}/examples/reviewer/reviews\n`,
    );
    expect(result.stdout).toContain("$ANTHROPIC_API_KEY: not set");
  });
});

describe("podkit command line", () => {
  it("lists the commands with --help and with no arguments", async () => {
    for (const args of [["--help"], []]) {
      const result = await runBin(args, { cwd: root, env });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("Usage: podkit <command> [options]");
      expect(result.stdout).toMatch(/^ {2}manifest show +print the resolved manifest/m);
    }
  });

  it("shows a command's usage and options with --help", async () => {
    const result = await runBin(["manifest", "show", "--help"], { cwd: root, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: podkit manifest show [file] [--set key=value]... [--json]");
    expect(result.stdout).toMatch(/^ {2}--set <key=value> +overlay one value/m);
    expect(result.stdout).toMatch(/^ {2}--json +print machine-readable JSON/m);
  });

  it("prints the package version with --version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    const result = await runBin(["--version"], { cwd: root, env });
    expect(result).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  it("rejects unknown commands, unknown options and extra arguments with exit code 2 and a hint", async () => {
    const unknown = await runBin(["manifset", "show"], { cwd: root, env });
    expect(unknown).toEqual({
      code: 2,
      stdout: "",
      stderr: 'error: unknown command "manifset"\nhint: run "podkit --help" for the list of commands\n',
    });
    const option = await runBin(["manifest", "show", "--jsn"], { cwd: root, env });
    expect(option.code).toBe(2);
    expect(option.stderr).toBe(
      "error: Unknown option '--jsn'\nhint: run \"podkit manifest show --help\" for its usage\n",
    );
    const extra = await runBin(["manifest", "show", "a.toml", "b.toml"], { cwd: root, env });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('error: unexpected argument "b.toml"');
  });

  it("lists the subcommands of a group given without one", async () => {
    const result = await runBin(["manifest"], { cwd: root, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Usage: podkit manifest <command> [options]");
    expect(result.stderr).toMatch(/^ {2}manifest show +print/m);
  });
});
