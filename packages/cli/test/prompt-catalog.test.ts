import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { POD_PROMPTS } from "@podkit/pod";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBin } from "./run-bin.js";

let root: string;
let env: Record<string, string>;

async function write(rel: string, content: string): Promise<void> {
  const file = join(root, rel);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, content);
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-prompts-")));
  env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "xdg") };
  await mkdir(join(root, "home"));
  await write("xdg/podkit/prompts.toml", '[prompt]\ninterrupt_system_note = "[user note]"\n');
  await write(
    "proj/.podkit/prompts.toml",
    '[prompt]\nnotify_wrapper = "WS: {{ message }}"\nnotfy_wrapper = "typo"\n',
  );
  await write(
    "proj/.podkit/manifest.toml",
    '[pod]\nname = "bot"\nprompt_pack = "packs/role.toml"\n\n[model]\nref = "anthropic/claude-sonnet-4-5"\n',
  );
  await write(
    "proj/.podkit/packs/role.toml",
    '[prompt]\ncompact_nudge_missing_summary = "Call write_summary."\n',
  );
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("podkit prompt catalog", () => {
  it("lists every key with the winning layer and file, and warns about unknown pack keys", async () => {
    const result = await runBin(["prompt", "catalog"], { cwd: join(root, "proj"), env });
    expect(result.code).toBe(0);
    const rows = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.trim().split(/\s{2,}/));
    expect(rows).toHaveLength(POD_PROMPTS.length);
    const byKey = new Map(rows.map(([key, layer, file]) => [key, { layer, file }]));
    expect(byKey.get("interrupt_system_note")).toEqual({
      layer: "user",
      file: join(root, "xdg/podkit/prompts.toml"),
    });
    expect(byKey.get("notify_wrapper")).toEqual({ layer: "workspace", file: ".podkit/prompts.toml" });
    expect(byKey.get("compact_nudge_missing_summary")).toEqual({
      layer: "manifest",
      file: ".podkit/packs/role.toml",
    });
    expect(byKey.get("compact_system")?.layer).toBe("builtin");
    expect(byKey.get("compact_system")?.file).toMatch(/resources\/prompts\/internal\.toml$/);
    expect(result.stderr).toMatch(
      /^warning: workspace prompt pack .*prompts\.toml: unknown prompt key 'notfy_wrapper'/,
    );
  });

  it("prints the winning template source of one key", async () => {
    const result = await runBin(["prompt", "catalog", "notify_wrapper"], { cwd: join(root, "proj"), env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("WS: {{ message }}\n");
  });

  it("--explain prints layer, file and source", async () => {
    const result = await runBin(["prompt", "catalog", "interrupt_system_note", "--explain"], {
      cwd: join(root, "proj"),
      env,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `key:    interrupt_system_note\nlayer:  user\nfile:   ${join(root, "xdg/podkit/prompts.toml")}\nsource:\n[user note]\n`,
    );
  });

  it("--json prints one object per key with the layer and file that supplied it, and the source with --explain", async () => {
    const cwd = join(root, "proj");
    const listed = await runBin(["prompt", "catalog", "--json"], { cwd, env });
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(rows.map((row) => row.key)).toEqual([...POD_PROMPTS]);
    expect(rows.find((row) => row.key === "interrupt_system_note")).toEqual({
      key: "interrupt_system_note",
      layer: "user",
      file: join(root, "xdg/podkit/prompts.toml"),
    });
    expect(rows.find((row) => row.key === "notify_wrapper")).toEqual({
      key: "notify_wrapper",
      layer: "workspace",
      file: join(root, "proj/.podkit/prompts.toml"),
    });
    expect(rows.find((row) => row.key === "compact_nudge_missing_summary")?.layer).toBe("manifest");
    expect(rows.find((row) => row.key === "compact_system")?.layer).toBe("builtin");

    const explained = JSON.parse(
      (await runBin(["prompt", "catalog", "--json", "--explain"], { cwd, env })).stdout,
    ) as Record<string, unknown>[];
    expect(explained).toHaveLength(POD_PROMPTS.length);
    expect(explained.find((row) => row.key === "notify_wrapper")).toEqual({
      key: "notify_wrapper",
      layer: "workspace",
      file: join(root, "proj/.podkit/prompts.toml"),
      source: "WS: {{ message }}",
    });
    for (const row of explained) expect(typeof row.source).toBe("string");

    const one = await runBin(["prompt", "catalog", "interrupt_system_note", "--json"], { cwd, env });
    expect(JSON.parse(one.stdout)).toEqual({
      key: "interrupt_system_note",
      layer: "user",
      file: join(root, "xdg/podkit/prompts.toml"),
      source: "[user note]",
    });
  });

  it("applies the pack of --manifest instead of the workspace manifest", async () => {
    await write(
      "other/pod.toml",
      '[pod]\nname = "o"\nprompt_pack = "$user/packs/p.toml"\n[model]\nref = "openai/gpt-4o"\n',
    );
    await write("xdg/podkit/prompts/packs/p.toml", '[prompt]\nnotify_wrapper = "PACK {{ message }}"\n');
    const result = await runBin(
      ["prompt", "catalog", "notify_wrapper", "--explain", "--manifest", "../other/pod.toml"],
      {
        cwd: join(root, "proj"),
        env,
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("layer:  manifest\n");
    expect(result.stdout).toContain("PACK {{ message }}");
  });

  it("refuses an unknown key with the list of keys", async () => {
    const result = await runBin(["prompt", "catalog", "nope"], { cwd: join(root, "proj"), env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: unknown prompt key "nope"\nhint: known keys: compact_system, /);
  });

  it("reports a broken pack with layer, file, key and line, without a stack trace", async () => {
    await write("proj/.podkit/prompts.toml", '[prompt]\nnotify_wrapper = "{{ message "\n');
    const result = await runBin(["prompt", "catalog"], { cwd: join(root, "proj"), env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error: workspace prompt pack ${join(root, "proj/.podkit/prompts.toml")}:2, key [prompt].notify_wrapper: template syntax error`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
