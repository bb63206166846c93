import { createHash } from "node:crypto";
import {
  checkOutputSchema,
  compileJsonSchema,
  type JsonSchemaIssue,
  type JsonSchemaValidate,
  type OutputJsonSchema,
} from "@podkit/manifest";
import { z } from "zod";
import { canonicalJson } from "../context/context-key.js";
import { PodUsageError } from "../errors.js";

/** One way an answer breaks the output schema: where (a JSON Pointer, `""` for the whole) and what. */
export type OutputIssue = JsonSchemaIssue;

/** A checked answer: the value (zod's parsed output for a zod schema), or what is wrong with it. */
export type OutputValidation<T> = { ok: true; value: T } | { ok: false; issues: OutputIssue[] };

/** What a pod may be given as its output schema: a zod schema or a JSON Schema with an object root. */
export type OutputSchemaInput = z.ZodType | Readonly<Record<string, unknown>>;

/** An output schema in the forms a pod needs: for the provider, for checking, for the log. */
export interface OutputSchema<T = unknown> {
  /** Sent to the provider (the `final_answer` tool's input schema, or the native response format). */
  readonly jsonSchema: OutputJsonSchema;
  /** `sha256:<hex>` of the canonical JSON (keys sorted) of `jsonSchema`: what the log records. */
  readonly digest: string;
  /** The top-level properties whose value is an array: the ones streamed element by element. */
  readonly arrayProperties: readonly string[];
  validate(value: unknown): OutputValidation<T>;
  /**
   * Checks one element of the top-level array property `property` against its item schema;
   * undefined when the schema declares no single item schema there.
   */
  validateElement(property: string, element: unknown): OutputValidation<unknown> | undefined;
}

/**
 * Turns a zod schema or a JSON Schema into an `OutputSchema`. A zod schema is converted to JSON
 * Schema (draft-07, its input side: what the model writes) and validates answers itself, so
 * refinements and transforms apply and `validate` returns zod's output (`z.infer`). A JSON Schema
 * is compiled by ajv (every error, standard formats) exactly as the manifest checks `[output]`.
 * Either way the root must describe an object (docs/output.md); anything else is a
 * `PodUsageError`.
 */
export function toOutputSchema<S extends z.ZodType>(schema: S): OutputSchema<z.output<S>>;
export function toOutputSchema(
  schema: Readonly<Record<string, unknown>>,
): OutputSchema<Record<string, unknown>>;
export function toOutputSchema(schema: OutputSchemaInput): OutputSchema<unknown>;
export function toOutputSchema(schema: OutputSchemaInput): OutputSchema<unknown> {
  return isZodSchema(schema) ? fromZod(schema) : fromJsonSchema(schema);
}

function isZodSchema(schema: unknown): schema is z.ZodType {
  return typeof schema === "object" && schema !== null && "_zod" in schema;
}

function fromZod(schema: z.ZodType): OutputSchema<unknown> {
  let converted: Record<string, unknown>;
  try {
    converted = z.toJSONSchema(schema, { target: "draft-7", io: "input" }) as Record<string, unknown>;
  } catch (cause) {
    throw new PodUsageError(`the output schema cannot be written as JSON Schema: ${messageOf(cause)}`, {
      cause,
      hint: "use zod types JSON Schema can express (no dates, bigints, functions or custom checks without a type)",
    });
  }
  const { $schema: _dialect, ...jsonSchema } = converted;
  const checked = checkOutputSchema(jsonSchema);
  if (!checked.ok) throw usageError(checked.problem);
  const validateZod = (value: unknown, against: z.ZodType): OutputValidation<unknown> => {
    const parsed = against.safeParse(value);
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, issues: zodIssues(parsed.error) };
  };
  const fromJson = jsonElementValidators(checked.schema);
  const elements = new Map<string, ((value: unknown) => OutputValidation<unknown>) | undefined>();
  const elementOf = (property: string) => {
    if (!elements.has(property)) {
      const item = zodArrayElement(schema, property);
      const byJson = fromJson(property);
      elements.set(
        property,
        item ? (value) => validateZod(value, item) : byJson && ((value) => checkWith(byJson, value)),
      );
    }
    return elements.get(property);
  };
  return {
    jsonSchema: checked.schema,
    digest: digestOf(checked.schema),
    arrayProperties: arrayPropertiesOf(checked.schema),
    validate: (value) => validateZod(value, schema),
    validateElement: (property, element) => elementOf(property)?.(element),
  };
}

function fromJsonSchema(schema: Readonly<Record<string, unknown>>): OutputSchema<unknown> {
  const checked = checkOutputSchema(schema);
  if (!checked.ok) throw usageError(checked.problem);
  const elementOf = jsonElementValidators(checked.schema);
  return {
    jsonSchema: checked.schema,
    digest: digestOf(checked.schema),
    arrayProperties: arrayPropertiesOf(checked.schema),
    validate: (value) => checkWith(checked.validate, value),
    validateElement: (property, element) => {
      const validate = elementOf(property);
      return validate && checkWith(validate, element);
    },
  };
}

function checkWith(validate: JsonSchemaValidate, value: unknown): OutputValidation<unknown> {
  const issues = validate(value);
  return issues.length === 0 ? { ok: true, value } : { ok: false, issues };
}

function usageError(problem: string): PodUsageError {
  return new PodUsageError(`the output schema cannot be used: ${problem}`, {
    hint: 'give an object schema (a zod z.object, or a JSON Schema with "type": "object" at its root); docs/output.md',
  });
}

/** `sha256:<hex>` of the schema's canonical JSON: equal schemas, however their keys were ordered, agree. */
function digestOf(schema: OutputJsonSchema): string {
  return `sha256:${createHash("sha256").update(canonicalJson(schema)).digest("hex")}`;
}

function propertiesOf(schema: OutputJsonSchema): Record<string, unknown> {
  const properties = schema.properties;
  return typeof properties === "object" && properties !== null ? (properties as Record<string, unknown>) : {};
}

function arrayPropertiesOf(schema: OutputJsonSchema): string[] {
  return Object.entries(propertiesOf(schema))
    .filter(([, property]) => isRecord(property) && (property.type === "array" || isRecord(property.items)))
    .map(([name]) => name);
}

/**
 * Validators of the item schema of each top-level array property, compiled on first use. The item
 * schema is compiled on its own with the root's definitions beside it, so `#/$defs/…` and
 * `#/definitions/…` references still resolve; an item schema that cannot stand alone (a
 * reference into other parts of the root, a tuple form) has none.
 */
function jsonElementValidators(
  schema: OutputJsonSchema,
): (property: string) => JsonSchemaValidate | undefined {
  const cache = new Map<string, JsonSchemaValidate | undefined>();
  return (property) => {
    if (cache.has(property)) return cache.get(property);
    const declared = propertiesOf(schema)[property];
    const items = isRecord(declared) ? declared.items : undefined;
    let validate: JsonSchemaValidate | undefined;
    if (isRecord(items) || typeof items === "boolean") {
      const standalone: Record<string, unknown> =
        typeof items === "boolean" ? (items ? {} : { not: {} }) : { ...items };
      for (const key of ["$schema", "$defs", "definitions"] as const) {
        if (schema[key] !== undefined && standalone[key] === undefined) standalone[key] = schema[key];
      }
      const compiled = compileJsonSchema(standalone);
      validate = compiled.ok ? compiled.validate : undefined;
    }
    cache.set(property, validate);
    return validate;
  };
}

/** The element schema of `z.object({ [property]: z.array(element) })`, through optional/nullable/default. */
function zodArrayElement(schema: z.ZodType, property: string): z.ZodType | undefined {
  if (!(schema instanceof z.ZodObject)) return undefined;
  let node = (schema.shape as Record<string, z.ZodType>)[property];
  while (node instanceof z.ZodOptional || node instanceof z.ZodNullable || node instanceof z.ZodDefault)
    node = node.unwrap() as z.ZodType;
  return node instanceof z.ZodArray ? (node.element as z.ZodType) : undefined;
}

function zodIssues(error: z.ZodError): OutputIssue[] {
  return error.issues.map((issue) => ({ path: pointerOf(issue.path), message: issue.message }));
}

/** A zod path as a JSON Pointer (RFC 6901), the form ajv reports too. */
function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((segment) => `/${String(segment).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
