import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";

/** Where a shell looks when `PATH` is not set at all (bash's and dash's built-in default). */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The absolute path of `name` as a shell would find it on `path` (the pod's `PATH`; the shells'
 * default when it is unset), or undefined. A name with a slash is taken as it is. Nothing is
 * cached: installing a program takes effect at the next pod.
 */
export async function findProgram(name: string, path: string | undefined): Promise<string | undefined> {
  if (name.includes("/")) return (await isExecutable(name)) ? name : undefined;
  for (const dir of (path ?? DEFAULT_PATH).split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return false;
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}
