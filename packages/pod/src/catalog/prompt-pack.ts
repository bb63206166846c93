import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import type { WarningSink } from "../warnings.js";
import { PromptCatalogError, type PromptLayer } from "./errors.js";
import { isPodPrompt, type PodPrompt } from "./pod-prompt.js";

/** One `[prompt]` value of a pack, with where it came from. */
export interface PromptPackEntry {
  readonly key: PodPrompt;
  readonly source: string;
  readonly layer: PromptLayer;
  readonly file: string;
  /** 1-based line of the key in the file, when it could be found. */
  readonly line: number | undefined;
}

const PackShape = z.object({ prompt: z.record(z.string(), z.unknown()).optional() }).catchall(z.unknown());

/**
 * Parses a prompt pack (`[prompt]` table of template strings). Bad TOML, a `[prompt]` that is
 * not a table and non-string values are errors naming the file (and line/key). Unknown keys are
 * a warning in runtime layers (forward compatibility) and an error in the builtin layer.
 */
export function parsePromptPack(
  text: string,
  site: { readonly layer: PromptLayer; readonly file: string },
  warn: WarningSink,
): PromptPackEntry[] {
  let document: unknown;
  try {
    document = parseToml(text);
  } catch (error) {
    const e = error as { line?: number; column?: number; message?: string };
    throw new PromptCatalogError(
      `invalid TOML: ${String(e.message ?? error).split("\n")[0]}`,
      {
        ...site,
        line: e.line,
        column: e.column,
      },
      { cause: error, hint: "Fix the TOML syntax at that line." },
    );
  }
  const shape = PackShape.safeParse(document);
  if (!shape.success) {
    throw new PromptCatalogError("[prompt] must be a table of strings", {
      ...site,
      line: findLine(packLines(text), null, "prompt"),
    });
  }
  // smol-toml's tables have null prototypes, so `__proto__` is an ordinary key there; zod's
  // output objects would drop it silently. Keys are read from the document itself.
  const raw = document as Record<string, unknown>;
  for (const name of Object.keys(raw)) {
    if (name !== "prompt")
      unknownKey(site, name, `unknown top-level key '${name}' (only [prompt] is read)`, warn);
  }
  const entries: PromptPackEntry[] = [];
  const lines = packLines(text);
  for (const [key, value] of Object.entries((raw.prompt ?? {}) as Record<string, unknown>)) {
    const line = findLine(lines, "prompt", key);
    if (typeof value !== "string") {
      const got = Array.isArray(value)
        ? "an array"
        : typeof value === "object"
          ? "a table"
          : `a ${typeof value}`;
      throw new PromptCatalogError(
        `the value must be a string (a template), got ${got}`,
        { ...site, key, line },
        {
          hint: 'Write the prompt as a TOML string, e.g. key = """…""".',
        },
      );
    }
    if (!isPodPrompt(key)) {
      unknownKey(
        site,
        key,
        `unknown prompt key '${key}' ignored (not a PodPrompt key of this podkit version)`,
        warn,
      );
      continue;
    }
    entries.push({ key, source: value, layer: site.layer, file: site.file, line });
  }
  return entries;
}

function unknownKey(
  site: { layer: PromptLayer; file: string },
  key: string,
  problem: string,
  warn: WarningSink,
) {
  if (site.layer === "builtin") throw new PromptCatalogError(problem, { ...site, key });
  warn({
    code: "prompt_pack.unknown_key",
    message: `${site.layer} prompt pack ${site.file}: ${problem}`,
    layer: site.layer,
    file: site.file,
    key,
  });
}

/** The lines of a pack, each with the table it sits in (headers are under their outer table). */
interface PackLine {
  readonly text: string;
  readonly table: string | null;
  readonly header: boolean;
}

/** Splits a pack once for all its `findLine` look-ups (a pack holds dozens of keys). */
function packLines(text: string): PackLine[] {
  let current: string | null = null;
  return text.split(/\r?\n/).map((line): PackLine => {
    const tableMatch = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
    const entry = { text: line, table: current, header: tableMatch !== null };
    if (tableMatch) current = tableMatch[1] as string;
    return entry;
  });
}

/** Best-effort 1-based line of `key =` inside `[table]` (or of the `[key]` header at top level). */
function findLine(lines: readonly PackLine[], table: string | null, key: string): number | undefined {
  const quoted = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const assignment = new RegExp(`^\\s*(?:${quoted}|"${quoted}"|'${quoted}')\\s*=`);
  const header = new RegExp(`^\\s*\\[\\s*${quoted}\\s*\\]`);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as PackLine;
    if (line.header) {
      if (table === null && header.test(line.text)) return i + 1;
    } else if (line.table === table && line.text.includes(key) && assignment.test(line.text)) {
      return i + 1;
    }
  }
  return undefined;
}
