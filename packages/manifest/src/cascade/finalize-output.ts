import { readFile } from "node:fs/promises";
import { OUTPUT_DEFAULTS } from "../defaults.js";
import type { ManifestIssue } from "../errors.js";
import { displayPath } from "../format-issue.js";
import { checkOutputSchema } from "../output/json-schema.js";
import type { OutputConfig } from "../resolved-manifest.js";
import type { OutputLayer } from "../schema/layer-schema.js";

/** The key paths whose problems `OUTPUT_SCHEMA_HINT` speaks to. */
export const OUTPUT_SCHEMA_KEY = /^(?:subpods\.[A-Za-z0-9_-]+\.)?output\.schema$/;

/** Hint of a manifest whose only problems are its output schemas. */
export const OUTPUT_SCHEMA_HINT =
  'fix the schema named above: a JSON object that is a valid JSON Schema with "type": "object" at its root (docs/output.md)';

/**
 * `[output]` (or a role's, under `keyPath`) after the cascade: the schema file read, parsed and
 * checked as an output schema, or the inline table checked the same way; strategy and
 * `max_repairs` defaulted. A table without `schema`, a file that cannot be read or parsed and a
 * schema that cannot be one are issues naming the key and the file; `undefined` when the table
 * is absent.
 */
export async function finalizeOutput(
  layer: OutputLayer | undefined,
  keyPath: string,
  context: { cwd: string },
  fromBuiltin: (keyPath: string) => void,
  at: (keyPath: string, problem: string) => ManifestIssue,
  issues: ManifestIssue[],
): Promise<OutputConfig | undefined> {
  if (layer === undefined) return undefined;
  if (layer.strategy === undefined) fromBuiltin(`${keyPath}.strategy`);
  if (layer.max_repairs === undefined) fromBuiltin(`${keyPath}.max_repairs`);
  const source = layer.schema;
  if (source === undefined) {
    issues.push(
      at(
        keyPath,
        `[${keyPath}] needs schema = "<path to a JSON Schema file>" (or an inline [${keyPath}.schema] table)`,
      ),
    );
    return undefined;
  }
  const loaded =
    typeof source === "string"
      ? await readSchemaFile(source, context.cwd)
      : { ok: true as const, value: source };
  if (!loaded.ok) {
    issues.push(at(`${keyPath}.schema`, loaded.problem));
    return undefined;
  }
  const checked = checkOutputSchema(loaded.value);
  if (!checked.ok) {
    const what =
      typeof source === "string" ? `schema file ${displayPath(source, context.cwd)}` : "the schema";
    issues.push(at(`${keyPath}.schema`, `${what}: ${checked.problem}`));
    return undefined;
  }
  return {
    schema: checked.schema,
    schemaSource: typeof source === "string" ? source : "inline",
    strategy: layer.strategy ?? OUTPUT_DEFAULTS.strategy,
    max_repairs: layer.max_repairs ?? OUTPUT_DEFAULTS.max_repairs,
  };
}

async function readSchemaFile(
  file: string,
  cwd: string,
): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
  const shown = displayPath(file, cwd);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === "ENOENT"
        ? `schema file not found: ${shown} (a path is relative to the manifest that sets it)`
        : code === "EISDIR"
          ? `schema file ${shown} is a directory, not a JSON file`
          : `schema file ${shown} cannot be read (${code ?? String(error)})`;
    return { ok: false, problem };
  }
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (error) {
    return { ok: false, problem: `schema file ${shown} is not JSON: ${jsonSyntaxProblem(error, body)}` };
  }
}

/** `JSON.parse`'s complaint with its character position turned into a line and column. */
export function jsonSyntaxProblem(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(message);
  if (position === null || /\(line \d+/.test(message)) return message;
  const offset = Number(position[1]);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `${message.slice(0, position.index).trimEnd()} (line ${line}, column ${column})`;
}
