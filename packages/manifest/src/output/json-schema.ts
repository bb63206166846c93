import { createRequire } from "node:module";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { Ajv2020 } from "ajv/dist/2020.js";

// ajv is loaded on the first schema compiled, not with the package: a manifest without `[output]`
// (most of them) never pays for it (about 150 ms). ajv and ajv-formats are CommonJS, so a
// synchronous require does it.
const require = createRequire(import.meta.url);

/** A JSON Schema whose root describes an object: what `[output] schema` holds (docs/output.md). */
export type OutputJsonSchema = { readonly type: "object" } & { readonly [keyword: string]: unknown };

/** One way a value breaks a JSON Schema. */
export interface JsonSchemaIssue {
  /** Where in the value, as a JSON Pointer (`/findings/2/line`); `""` is the value itself. */
  path: string;
  /** What is wrong there, written for a person or a model to fix it. */
  message: string;
}

/** Checks a value; no issues means it is valid. */
export type JsonSchemaValidate = (value: unknown) => JsonSchemaIssue[];

/** A compiled JSON Schema, or why it does not compile. */
export type JsonSchemaCompilation =
  | { ok: true; validate: JsonSchemaValidate }
  | { ok: false; problem: string };

/** An output schema checked and compiled, or why it cannot be one. */
export type OutputSchemaCheck =
  | { ok: true; schema: OutputJsonSchema; validate: JsonSchemaValidate }
  | { ok: false; problem: string };

/**
 * Compiles a JSON Schema with ajv, the reference validator: draft-07, or 2020-12 when `$schema`
 * names 2020-12 or 2019-09 (as `@podkit/llm-worker` does for tool schemas), every error reported
 * (`allErrors`), the standard `format`s checked (ajv-formats). Unknown keywords and formats are
 * ignored, not refused: schemas written for one provider carry vendor keywords.
 */
export function compileJsonSchema(schema: unknown): JsonSchemaCompilation {
  const problem = jsonValueProblem(schema, "");
  if (problem !== undefined) return { ok: false, problem };
  if (!isPlainObject(schema) && typeof schema !== "boolean")
    return { ok: false, problem: `a JSON Schema is an object (or true/false), got ${kindOf(schema)}` };
  const ajv = validatorFor(schema);
  if (!ajv.validateSchema(schema as object)) {
    return { ok: false, problem: `is not a valid JSON Schema: ${describeErrors(ajv.errors, 3)}` };
  }
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    return {
      ok: false,
      problem: `is not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    // The compiled function keeps what it needs; dropping the schema frees its `$id`, so the same
    // schema loaded again (another manifest load, a sub-pod) compiles instead of colliding.
    if (typeof schema === "object") ajv.removeSchema(schema as object);
  }
  return {
    ok: true,
    validate: (value) => (validate(value) ? [] : issuesOf(validate.errors)),
  };
}

/**
 * Checks that `schema` can be an output schema: JSON data (no dates, no non-finite numbers), an
 * object whose root is an object schema (`"type": "object"`, because the tool strategy sends it
 * as the `final_answer` tool's input schema, and providers take only objects there), and a valid
 * JSON Schema. The one definition of an output schema, used by the manifest and by the pod.
 */
export function checkOutputSchema(schema: unknown): OutputSchemaCheck {
  const problem = jsonValueProblem(schema, "");
  if (problem !== undefined) return { ok: false, problem };
  if (!isPlainObject(schema))
    return { ok: false, problem: `must be a JSON Schema object, got ${kindOf(schema)}` };
  if (schema.type !== "object") {
    return {
      ok: false,
      problem: `the schema's root must describe an object ("type": "object"), got ${
        schema.type === undefined ? "no type" : `"type": ${JSON.stringify(schema.type)}`
      }; wrap other values in a property`,
    };
  }
  const compiled = compileJsonSchema(schema);
  if (!compiled.ok) return compiled;
  return { ok: true, schema: schema as OutputJsonSchema, validate: compiled.validate };
}

// One validator per dialect: checking a schema against its meta-schema is the expensive part
// (tens of milliseconds), and the meta-schema is compiled once per validator.
const OPTIONS = { strict: false, allErrors: true, logger: false } as const;
let draft7: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

function validatorFor(schema: unknown): Ajv | Ajv2020 {
  const dialect = isPlainObject(schema) && typeof schema.$schema === "string" ? schema.$schema : "";
  if (/2020-12|2019-09/.test(dialect)) {
    const { Ajv2020 } = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
    draft2020 ??= withFormats(new Ajv2020(OPTIONS));
    return draft2020;
  }
  const { Ajv } = require("ajv") as typeof import("ajv");
  draft7 ??= withFormats(new Ajv(OPTIONS));
  return draft7;
}

function withFormats<A extends Ajv | Ajv2020>(ajv: A): A {
  const addFormats = require("ajv-formats") as typeof import("ajv-formats")["default"];
  addFormats(ajv);
  return ajv;
}

function issuesOf(errors: readonly ErrorObject[] | null | undefined): JsonSchemaIssue[] {
  const seen = new Set<string>();
  const out: JsonSchemaIssue[] = [];
  for (const error of errors ?? []) {
    const issue = { path: error.instancePath, message: messageOf(error) };
    const key = `${issue.path}\0${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}

/** ajv's message, with the value that would have been right where ajv leaves it out. */
function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "additionalProperties":
      return `must not have the property "${String(params.additionalProperty)}"`;
    default:
      return error.message ?? "is invalid";
  }
}

function describeErrors(errors: readonly ErrorObject[] | null | undefined, most: number): string {
  const issues = issuesOf(errors);
  const shown = issues.slice(0, most).map((issue) => `${issue.path || "(root)"}: ${issue.message}`);
  const more = issues.length > most ? ` (and ${issues.length - most} more)` : "";
  return `${shown.join("; ")}${more}`;
}

/** Why `value` is not plain JSON data (TOML dates, non-finite numbers, …), with where. */
export function jsonValueProblem(value: unknown, path: string): string | undefined {
  const at = path === "" ? "" : ` at ${path}`;
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number")
    return Number.isFinite(value) ? undefined : `holds ${value}${at}, which JSON cannot represent`;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const problem = jsonValueProblem(item, `${path}/${i}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (isPlainObject(value)) {
    for (const [key, member] of Object.entries(value)) {
      const problem = jsonValueProblem(member, `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return `holds ${kindOf(value)}${at}, which is not JSON data`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype; // smol-toml builds tables with a null prototype
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  if (typeof value === "object") return "an object that is not plain data";
  return `a ${typeof value}`;
}
