import { parse } from "smol-toml";
import { manifestError } from "../format-issue.js";
import type { ParsedLayer } from "./layer.js";
import { resolveLayerPaths } from "./resolve-layer-paths.js";
import { validateLayer } from "./validate-layer.js";

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const OVERLAY_HINT =
  'write --set <dotted.key>=<value>, e.g. --set worker.max_turns=20 or --set pod.name="reviewer"';

/**
 * Turns one `--set key=value` into a layer. The value is read as a TOML value (`20`, `true`,
 * `"text"`, `[1, 2]`, `{ target = "src", permission = "read" }`), falling back to the raw text as
 * a string when it is not one. Relative paths in it resolve against `cwd`.
 */
export function parseOverlay(text: string, cwd: string): ParsedLayer {
  const eq = text.indexOf("=");
  const key = eq < 0 ? "" : text.slice(0, eq).trim();
  if (key === "") throw overlayError(text, cwd, "expected key=value");
  const segments = key.split(".").map((s) => s.trim());
  const bad = segments.find((s) => !BARE_KEY.test(s));
  if (bad !== undefined) {
    throw overlayError(
      text,
      cwd,
      `"${key}" is not a dotted key path ("${bad}" is not a bare key; list items cannot be addressed by index — setting scope.allow adds rules)`,
    );
  }
  const value = parseValue(text.slice(eq + 1));
  // Null-prototype tables, like smol-toml's: a segment such as "__proto__" stays an ordinary
  // (and, to the strict schema, unknown) key.
  const raw: Record<string, unknown> = Object.create(null);
  let node = raw;
  for (const segment of segments.slice(0, -1)) {
    const child: Record<string, unknown> = Object.create(null);
    node[segment] = child;
    node = child;
  }
  node[segments[segments.length - 1] as string] = value;
  const layer = { kind: "set" as const, overlay: text, present: true };
  const origin = { overlay: text };
  const data = resolveLayerPaths(validateLayer(raw, origin, cwd), cwd, origin, cwd);
  return { layer, data };
}

function parseValue(text: string): unknown {
  try {
    const doc = parse(`value = ${text}`, { unsafeKeyBehaviour: "throw" });
    const keys = Object.keys(doc);
    if (keys.length === 1 && keys[0] === "value") return doc.value;
  } catch {
    // Not a TOML value: the text itself is the (string) value.
  }
  return text;
}

function overlayError(text: string, cwd: string, problem: string) {
  return manifestError("overlay", [{ overlay: text, problem }], { cwd, hint: OVERLAY_HINT });
}
