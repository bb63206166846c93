import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { checkOutputSchema, jsonSyntaxProblem, type OutputJsonSchema } from "@podkit/manifest";
import { OutputSchemaFileError } from "../errors.js";

/**
 * Reads the JSON Schema file `--output-schema` names (relative to `cwd`) and checks it as an output
 * schema, the check `[output] schema` gets when a manifest loads (docs/output.md). Every problem is
 * an `OutputSchemaFileError` naming the file, before any session is written.
 */
export async function readOutputSchemaFile(file: string, cwd: string): Promise<OutputJsonSchema> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), "utf8");
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const problem =
      code === "ENOENT"
        ? "no such file (the path is relative to the current directory)"
        : code === "EISDIR"
          ? "it is a directory, not a JSON file"
          : `it cannot be read (${code ?? String(cause)})`;
    throw new OutputSchemaFileError(file, problem, { cause });
  }
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (cause) {
    throw new OutputSchemaFileError(file, `it is not JSON: ${jsonSyntaxProblem(cause, body)}`, { cause });
  }
  const checked = checkOutputSchema(value);
  if (!checked.ok) throw new OutputSchemaFileError(file, `it cannot be an output schema: ${checked.problem}`);
  return checked.schema;
}
