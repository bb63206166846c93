import { cp, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { type LoadedManifest, Scope, type ScopeRule } from "@podkit/manifest";

/** A scratch copy of a workspace and the manifest rebased into it; `dispose` removes the copy. */
export interface ScratchWorkspace {
  readonly loaded: LoadedManifest;
  dispose(): Promise<void>;
}

/** What the copy leaves out: the workspace's session logs and eval results (podkit's own data). */
const SKIPPED = [join(".podkit", "sessions"), join(".podkit", "evals")];

/**
 * Copies the manifest's workspace into a new temp directory and rebases the manifest there: the
 * workspace and every scope rule inside it point into the copy (rules outside the workspace keep
 * their paths), so `live` tools read and write the copy, never the original.
 */
export async function scratchWorkspace(loaded: LoadedManifest): Promise<ScratchWorkspace> {
  const source = await realpath(loaded.workspace);
  const root = await mkdtemp(join(tmpdir(), "podkit-eval-"));
  const copy = join(root, "workspace");
  await cp(source, copy, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (path) => !SKIPPED.some((skipped) => path === join(source, skipped)),
  });
  const rebase = (rule: ScopeRule): ScopeRule => {
    const inside = relative(source, rule.target);
    const within =
      inside === "" || (!inside.startsWith(`..${sep}`) && inside !== ".." && !inside.startsWith(sep));
    return within ? { ...rule, target: inside === "" ? copy : join(copy, inside) } : rule;
  };
  const allow = loaded.manifest.scope.allow.map(rebase);
  const deny = loaded.manifest.scope.deny.map(rebase);
  const scope = await Scope.fromRules(allow, deny, copy);
  return {
    loaded: {
      ...loaded,
      workspace: copy,
      scope,
      manifest: { ...loaded.manifest, scope: { allow, deny } },
    },
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}
