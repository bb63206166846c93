import { mkdir, realpath, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
