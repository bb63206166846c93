import { mkdir, realpath, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type LoadedManifest, loadManifest } from "@podkit/manifest";
import { writeFiles } from "./helpers.js";
import { MODEL_REF } from "./pod-harness.js";

const packagesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Installs the built `@podkit/store-postgres` into `<dir>/node_modules` the way a package manager
 * links it (a symlink to the package directory, whose own `node_modules` hold `pg` and
 * `@podkit/session-store`), so a manifest under `dir` selecting PostgreSQL finds it there.
 */
export async function installStorePackage(dir: string): Promise<void> {
  const target = join(dir, "node_modules", "@podkit", "store-postgres");
  await mkdir(dirname(target), { recursive: true });
  await symlink(await realpath(join(packagesDir, "store-postgres")), target, "dir");
}

/**
 * A workspace (`<root>/project`) whose manifest has `session` as its `[session]` table, under a
 * fresh temp `root` from `tempDir`; returns it loaded.
 */
export async function workspaceWith(
  tempDir: (label?: string) => Promise<string>,
  session: string,
): Promise<{ root: string; workspace: string; loaded: LoadedManifest }> {
  const root = await tempDir("store");
  await writeFiles(root, {
    "project/.podkit/manifest.toml": `[pod]\nname = "p"\n[model]\nref = "${MODEL_REF}"\n${session}`,
  });
  const workspace = join(root, "project");
  const loaded = await loadManifest({ env: { cwd: workspace, home: join(root, "home"), env: {} } });
  return { root, workspace, loaded };
}
