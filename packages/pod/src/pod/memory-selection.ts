import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { LoadedManifest } from "@podkit/manifest";
import { importResolved, resolveOptionalPackage, whereSet } from "./optional-package.js";
import type { PodOptions } from "./pod-options.js";
import {
  MemoryPackageInvalidError,
  MemoryPackageMissingError,
  MemoryWithoutWorkspaceError,
} from "./store-selection-errors.js";

/** The package that gives a `[memory]` manifest its memory. */
export const MEMORY_PACKAGE = "@podkit/memory";

/** What the pod calls of the memory package: `attachMemory(pod)` (idempotent per pod). */
interface MemoryPackage {
  attachMemory(pod: object): unknown;
}

/**
 * Attaches memory to a pod whose manifest has a `[memory]` table, the way the session store is
 * found: the application's copy (`PodOptions.packages["@podkit/memory"]`), else the package
 * installed where the manifest that set `[memory]` is, else in the workspace. The pod does not
 * depend on memory; memory depends on nothing of the pod but its extension points. With
 * `PodOptions.attachMemory: false` the caller attaches memory itself (with its own options).
 *
 * Throws `MemoryPackageMissingError` naming where it looked when the package is not installed,
 * and `MemoryPackageInvalidError` when it does not export `attachMemory`.
 */
export async function attachManifestMemory(
  pod: object,
  loaded: LoadedManifest,
  options: PodOptions,
): Promise<void> {
  if (loaded.manifest.memory === undefined || options.attachMemory === false) return;
  if (!(await isDirectory(join(loaded.workspace, ".podkit")))) {
    throw new MemoryWithoutWorkspaceError(
      `[memory]${whereSet(loaded, "memory")} keeps its records in ${join(loaded.workspace, ".podkit", "memory")}, but ${loaded.workspace} has no .podkit/ directory`,
      { workspace: loaded.workspace },
    );
  }
  const provide = options.packages?.[MEMORY_PACKAGE];
  let loadedFrom: string | undefined;
  if (provide === undefined) {
    const found = resolveOptionalPackage(loaded, MEMORY_PACKAGE, "memory");
    if (!("path" in found)) {
      throw new MemoryPackageMissingError(
        `[memory]${whereSet(loaded, "memory")} needs the package ${MEMORY_PACKAGE}, which is not installed where the manifest is; looked in ${found.searched.join(", ")}`,
        {
          packageName: MEMORY_PACKAGE,
          hint: `install it in the workspace: cd ${loaded.workspace} && npm install ${MEMORY_PACKAGE} (or pnpm add ${MEMORY_PACKAGE}), or remove the [memory] table`,
          cause: found.cause,
        },
      );
    }
    loadedFrom = found.path;
  }
  const module =
    loadedFrom === undefined ? await (provide as () => Promise<unknown>)() : await importResolved(loadedFrom);
  if (typeof (module as Partial<MemoryPackage> | null)?.attachMemory !== "function") {
    throw new MemoryPackageInvalidError(
      `${MEMORY_PACKAGE}${loadedFrom === undefined ? "" : ` (${loadedFrom})`} does not export attachMemory, so the pod cannot attach the memory [memory] asks for`,
      {
        packageName: MEMORY_PACKAGE,
        hint: `install a version of ${MEMORY_PACKAGE} that matches @podkit/pod`,
      },
    );
  }
  (module as MemoryPackage).attachMemory(pod);
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
