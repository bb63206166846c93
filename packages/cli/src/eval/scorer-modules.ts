import { stat } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Scorer } from "@podkit/pod";
import { ScorerModuleError } from "../errors.js";

/**
 * Imports the custom scorers `--scorer` names, in order: each file (relative to `cwd`) is an ES
 * module whose default export is a scorer, `(item) => ({name, score, pass, detail?})` (sync or
 * async), as `runEval`'s `scorers` take. All are imported before any item runs; a file that is
 * missing, fails at import or exports anything else is a `ScorerModuleError` naming it.
 */
export async function loadScorerModules(files: readonly string[], cwd: string): Promise<Scorer[]> {
  const scorers: Scorer[] = [];
  for (const file of files) scorers.push(await loadScorerModule(file, cwd));
  return scorers;
}

async function loadScorerModule(file: string, cwd: string): Promise<Scorer> {
  const path = resolve(cwd, file);
  // Checked first: a missing file and a module whose own import is missing read alike from import().
  const found = await stat(path).catch((error: NodeJS.ErrnoException) => error);
  if (found instanceof Error) {
    throw new ScorerModuleError(file, found.code === "ENOENT" ? `no such file (${path})` : found.message, {
      cause: found,
    });
  }
  if (!found.isFile()) throw new ScorerModuleError(file, `${path} is not a file`);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ScorerModuleError(file, `importing it failed: ${message}`, { cause: error });
  }
  const scorer = module.default;
  if (typeof scorer !== "function") {
    const what =
      scorer === undefined ? "it has no default export" : `its default export is ${describe(scorer)}`;
    throw new ScorerModuleError(file, `${what}, not a scorer function`);
  }
  // A failing scorer is reported by its function's name: an anonymous default export goes by its file's.
  const named: Scorer = (item) => (scorer as Scorer)(item);
  const own = scorer.name === "" || scorer.name === "default" ? basename(path, extname(path)) : scorer.name;
  Object.defineProperty(named, "name", { value: own });
  return named;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
