import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";
import type { PodWarning } from "../src/warnings.js";

/** The fixed clock of the acceptance list: 2026-04-15 09:30:00 UTC. */
export const FIXED_CLOCK = () => new Date("2026-04-15T09:30:00Z");

/** Real temp directories, removed after each test. */
export function useTempDirs(): (label?: string) => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (label = "t") => {
    const dir = await mkdtemp(join(tmpdir(), `podkit-pod-${label}-`));
    made.push(dir);
    return dir;
  };
}

/** Writes `files` (relative path → content) under `root`, creating directories. */
export async function writeFiles(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const file = join(root, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

/** A warning sink that records what it receives. */
export function collectWarnings(): { warnings: PodWarning[]; sink: (w: PodWarning) => void } {
  const warnings: PodWarning[] = [];
  return { warnings, sink: (w) => warnings.push(w) };
}

/** Rejection of a promise (or throw of a function), failing the test if there was none. */
export async function caught(action: PromiseLike<unknown> | (() => unknown)): Promise<Error> {
  try {
    await (typeof action === "function" ? action() : action);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure, but it succeeded");
}
