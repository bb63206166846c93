import { join } from "node:path";
import { type LoadedManifest, Scope } from "@podkit/manifest";
import { isInside } from "../sandbox/bwrap/mount-plan.js";

/**
 * podkit's own directories, which decide what the next pod may do: the workspace's `.podkit/`
 * (manifest, memory), the session directory and the user config directory. The one list both
 * enforcers read: the sandbox keeps them read-only (`SandboxPolicy.protectedPaths`) and the file
 * tools refuse to write there, whatever the scope's write rules say.
 */
export function podkitPaths(loaded: LoadedManifest): string[] {
  return [join(loaded.workspace, ".podkit"), loaded.dataDir, loaded.userConfigDir];
}

/**
 * `podkitPaths` in canonical form (canonicalized as the scope canonicalizes its targets, so a
 * directory reached through a symlink is matched where it really is), answering whether a
 * canonical path is one of them or lies below one, by whole components.
 */
export class PodkitFiles {
  private constructor(readonly paths: readonly string[]) {}

  static async of(paths: readonly string[]): Promise<PodkitFiles> {
    const canonical: string[] = [];
    for (const target of new Set(paths)) {
      // A path that cannot be canonicalized (under an unreadable directory, say) is kept as given.
      const scope = await Scope.fromRules([{ target, permission: "read" }]).catch(() => undefined);
      canonical.push(scope?.allow[0]?.target ?? target);
    }
    return new PodkitFiles(canonical);
  }

  /** True when `canonical` is one of podkit's own directories or lies below one. */
  contains(canonical: string): boolean {
    return this.paths.some((dir) => isInside(canonical, dir));
  }
}
