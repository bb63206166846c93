import { mkdir, mkdtemp, readdir, readFile, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A scratch workspace with a `.podkit/manifest.toml` whose model is the provider double at `baseUrl`. */
export async function doubleWorkspace(
  baseUrl: string,
  extra = "",
): Promise<{ root: string; workspace: string; home: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "podkit-cli-")));
  const workspace = join(root, "ws");
  const home = join(root, "home");
  await mkdir(join(workspace, ".podkit"), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(
    join(workspace, ".podkit", "manifest.toml"),
    [
      "[pod]",
      'name = "tester"',
      "[model]",
      'ref = "anthropic/claude-sonnet-4-5"',
      `base_url = "${baseUrl}"`,
      "[tools]",
      "bash = true",
      "[[scope.allow]]",
      'target = ".."',
      'permission = "write"',
      extra,
    ].join("\n"),
  );
  return { root, workspace, home };
}

/** The session's entries (every segment, oldest first), parsed from the filesystem store. */
export async function sessionEntries(
  workspace: string,
  sessionId: string,
): Promise<Record<string, unknown>[]> {
  const dir = join(workspace, ".podkit", "sessions", sessionId);
  const entries: Record<string, unknown>[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith(".jsonl")).sort()) {
    for (const line of (await readFile(join(dir, file), "utf8")).split("\n")) {
      if (line.trim() === "") continue;
      entries.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  return entries;
}

/** True when every `invoke` is followed by its `run_completed` or `run_errored` before the next one. */
export function everyInvokeClosed(entries: readonly Record<string, unknown>[]): boolean {
  let open = false;
  for (const entry of entries) {
    if (entry.kind === "invoke") {
      if (open) return false;
      open = true;
    }
    if (entry.kind === "run_completed" || entry.kind === "run_errored") open = false;
  }
  return !open;
}
