// Each package reads its `Symbol.for` markers in one place, its `hasMarker` (docs/errors.md):
// a second hand-written check is a second way to recognise an error, and drifts from the first.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PACKAGES = fileURLToPath(new URL("../packages", import.meta.url));
/** A marker read by hand: `(value as Record<symbol, unknown>)[SOME_MARKER] === true`. */
const MARKER_CHECK = /\)\[[^\]]+\] === true/g;

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Every hand-written marker check of a package's sources, as `file:line`. */
function markerChecks(pkg) {
  return sources(join(PACKAGES, pkg, "src")).flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .flatMap((line, i) =>
        (line.match(MARKER_CHECK) ?? []).map(() => `${relative(PACKAGES, file)}:${i + 1}`),
      ),
  );
}

describe("one marker check per package", () => {
  it("recognises a hand-written marker check (positive control)", () => {
    const line = "return typeof v === 'object' && (v as Record<symbol, unknown>)[PATH_MARKER] === true;";
    expect(line.match(MARKER_CHECK)).toHaveLength(1);
  });

  const packages = readdirSync(PACKAGES);
  it.each(packages)("%s reads its markers in one place", (pkg) => {
    expect(markerChecks(pkg).length, markerChecks(pkg).join(", ")).toBeLessThanOrEqual(1);
  });
});
