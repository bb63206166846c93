import { isAbsolute, relative } from "node:path";
import type { PodkitEnv } from "@podkit/manifest";

/** A path as a person reads it: relative to the cwd when inside it, `~/…` under the home, else absolute. */
export function displayPath(path: string, env: PodkitEnv): string {
  const fromCwd = relative(env.cwd, path);
  if (fromCwd === "") return ".";
  if (!fromCwd.startsWith("..") && !isAbsolute(fromCwd)) return fromCwd;
  const fromHome = relative(env.home, path);
  if (fromHome !== "" && !fromHome.startsWith("..") && !isAbsolute(fromHome)) return `~/${fromHome}`;
  return path;
}
