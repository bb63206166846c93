import { isUtf8 } from "node:buffer";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { manifestError } from "../format-issue.js";
import { KeyLocator } from "../toml/locate-keys.js";
import { parseToml } from "../toml/parse-toml.js";
import type { LayerKind, ParsedLayer } from "./layer.js";
import { resolveLayerPaths } from "./resolve-layer-paths.js";
import { validateLayer } from "./validate-layer.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads, parses, validates and path-resolves one manifest file. An optional layer (user,
 * workspace) that does not exist yields a not-present layer instead of an error.
 */
export async function readLayerFile(
  kind: Exclude<LayerKind, "builtin" | "set">,
  file: string,
  options: { required: boolean; cwd: string },
): Promise<ParsedLayer | { layer: { kind: typeof kind; file: string; present: false } }> {
  const source = await readSource(file, options);
  if (source === undefined) return { layer: { kind, file, present: false } };
  return parseLayerSource(kind, file, source, options.cwd);
}

/** Parses the text of a manifest file as layer `kind` (also used by tests and tools with text in hand). */
export function parseLayerSource(
  kind: Exclude<LayerKind, "builtin" | "set">,
  file: string,
  source: string,
  cwd: string,
): ParsedLayer {
  const text = source.startsWith("\uFEFF") ? source.slice(1) : source;
  const raw = parseToml(text, { file, cwd });
  const locator = new KeyLocator(text);
  const origin = { file, locator };
  const validated = validateLayer(raw, origin, cwd);
  const data = resolveLayerPaths(validated, dirname(file), origin, cwd);
  return { layer: { kind, file, present: true }, data, locator };
}

async function readSource(
  file: string,
  options: { required: boolean; cwd: string },
): Promise<string | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !options.required) return undefined;
    const problem =
      code === "ENOENT"
        ? "manifest file not found"
        : code === "EISDIR"
          ? "is a directory, not a manifest file"
          : `cannot be read (${code ?? String(error)})`;
    throw manifestError("io", [{ file, problem }], {
      cwd: options.cwd,
      hint:
        code === "ENOENT"
          ? "check the path, or run the command from the directory it is relative to"
          : undefined,
      cause: error,
    });
  }
  try {
    return utf8.decode(bytes);
  } catch (error) {
    const line = firstInvalidUtf8Line(bytes);
    throw manifestError("io", [{ file, line, problem: "is not valid UTF-8 text" }], {
      cwd: options.cwd,
      hint: "save the manifest as UTF-8",
      cause: error,
    });
  }
}

/**
 * The 1-based line holding the first byte that is not UTF-8. No multi-byte sequence contains a
 * newline byte, so each line can be checked on its own.
 */
function firstInvalidUtf8Line(bytes: Buffer): number {
  let start = 0;
  for (let line = 1; ; line++) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline < 0 || !isUtf8(bytes.subarray(start, newline))) return line;
    start = newline + 1;
  }
}
