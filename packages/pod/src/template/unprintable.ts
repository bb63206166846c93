import {
  type TemplateLocation,
  TemplateUnprintableValueError,
  type UnprintableValue,
  withArticle,
} from "./errors.js";
import { isPlainObject } from "./values.js";

/** How many field names of a mapping the hint suggests, and how much of each at most. */
const SUGGESTED_FIELDS = 3;
const SUGGESTED_KEY_LENGTH = 40;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A name followed by `.field` / `[index]` steps: takes another `.field` without brackets.
const PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\][]*\])*$/;

/**
 * The located error for printing a list, mapping or host object. `written` is the expression the
 * value came from when the template wrote it (`scope`, `files.agents_md`, `x | sort`); the hint
 * then names what to print instead in the template's own terms (`scope.summary`, `tools | join`).
 */
export function unprintableError(
  refusal: UnprintableValue,
  at: TemplateLocation,
  written: string | undefined,
): TemplateUnprintableValueError {
  const { value, valueType, via } = refusal;
  const what = written === undefined ? withArticle(valueType) : `'${written}' (${withArticle(valueType)})`;
  const problem = `cannot print ${what}${via ? ` with ${via}` : ""}`;
  return new TemplateUnprintableValueError(problem, valueType, at, {
    cause: refusal,
    ...(written === undefined ? {} : { variable: written }),
    hint: hintFor(value, written),
  });
}

function hintFor(value: object, written: string | undefined): string {
  // Filters chain (`tools | sort | join`), but a field of `tools | sort` needs brackets.
  const piped = (filter: string) => (written === undefined ? `| ${filter}` : `${written} | ${filter}`);
  const base = written === undefined ? undefined : PATH.test(written) ? written : `(${written})`;
  if (Array.isArray(value)) {
    return `Print its items as text with \`${piped('join(", ")')}\` or a \`{% for %}\` loop, or use \`${piped("tojson")}\` for JSON.`;
  }
  if (!isPlainObject(value)) return "Print one of its attributes instead (a cycler's `current`, say).";
  const fields: string[] = [];
  let more = false;
  for (const key in value) {
    if (fields.length === SUGGESTED_FIELDS) {
      more = true;
      break;
    }
    const shown = key.length > SUGGESTED_KEY_LENGTH ? `${key.slice(0, SUGGESTED_KEY_LENGTH)}…` : key;
    const step = IDENTIFIER.test(key) ? `.${shown}` : `[${JSON.stringify(shown)}]`;
    fields.push(`\`${base ?? ""}${step}\``);
  }
  const which = fields.length === 0 ? "(it has none now)" : `(${fields.join(", ")}${more ? ", …" : ""})`;
  return `Print one of its fields ${which}, or use \`${piped("tojson")}\` for JSON.`;
}
