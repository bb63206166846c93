import { describe, expect, it } from "vitest";
import { isCovered } from "../src/scope/canonical-path.js";

/** The rule by whole components, written plainly: what `isCovered` must answer for every pair. */
function coveredByComponents(path: string, target: string, recursive: boolean): boolean {
  const parts = (p: string) => p.split("/").filter((part) => part !== "");
  const pathParts = parts(path);
  const targetParts = parts(target);
  if (pathParts.length < targetParts.length) return false;
  for (let i = 0; i < targetParts.length; i++) if (pathParts[i] !== targetParts[i]) return false;
  return recursive || pathParts.length - targetParts.length <= 1;
}

describe("isCovered", () => {
  it("answers as the component rule does for every pair of paths, plain or not", () => {
    // Names that are prefixes of each other, dots, and paths with empty components, a trailing
    // slash and the root: the in-place comparison must fall back (or agree) on all of them.
    const names = ["a", "ab", "b", "a.b", "."];
    const paths = new Set<string>(["/", "//", "/a/", "/a//b", "a", "a/b", ""]);
    const grow = (prefix: string, depth: number) => {
      for (const name of names) {
        const path = `${prefix}/${name}`;
        paths.add(path);
        paths.add(`${path}/`);
        if (depth > 1) grow(path, depth - 1);
      }
    };
    grow("", 3);
    let compared = 0;
    for (const path of paths) {
      for (const target of paths) {
        for (const recursive of [true, false]) {
          expect(isCovered(path, target, recursive), `${path} in ${target} (${recursive})`).toBe(
            coveredByComponents(path, target, recursive),
          );
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(100_000);
  });
});
