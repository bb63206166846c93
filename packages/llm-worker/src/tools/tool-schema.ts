import type { JSONSchema7 } from "@ai-sdk/provider";
import { Ajv, type ErrorObject } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import type { Tool } from "./tool.js";

/** The outcome of validating a call's parsed arguments. */
export type ArgumentCheck = { ok: true; value: unknown } | { ok: false; message: string };

/** A tool's input schema in both forms the worker needs. */
export interface CompiledToolSchema {
  /** Sent to the provider. */
  jsonSchema: JSONSchema7;
  /** Validates parsed arguments; the message is written for the model. */
  check(args: unknown): ArgumentCheck;
}

function isZodSchema(schema: Tool["inputSchema"]): schema is Exclude<Tool["inputSchema"], JSONSchema7> {
  return typeof schema === "object" && schema !== null && "_zod" in schema;
}

// One validator instance per dialect: compiling is the expensive part and ajv caches by schema.
// strict: false because tool schemas from MCP servers carry keywords ajv does not know (titles,
// vendor extensions); they must not stop a tool from registering.
let draft7: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

function validatorFor(schema: JSONSchema7): Ajv | Ajv2020 {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  if (/2020-12|2019-09/.test(dialect)) {
    draft2020 ??= new Ajv2020({ strict: false, allErrors: true });
    return draft2020;
  }
  draft7 ??= new Ajv({ strict: false, allErrors: true });
  return draft7;
}

function describeAjvErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map(
      (error) =>
        `${error.instancePath === "" ? "(root)" : error.instancePath.slice(1).replaceAll("/", ".")}: ${error.message ?? "is invalid"}`,
    )
    .join("; ");
}

/**
 * Turns a tool's `inputSchema` (zod or JSON Schema) into a JSON Schema for the provider and an
 * argument check. Zod schemas validate themselves; JSON Schemas (the MCP path) are compiled by
 * ajv, the reference JSON Schema validator (draft-07, or 2020-12 when `$schema` says so).
 * Throws when the schema cannot be converted or compiled.
 */
export function compileToolSchema(tool: Tool): CompiledToolSchema {
  if (isZodSchema(tool.inputSchema)) {
    const schema = tool.inputSchema;
    const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, {
      target: "draft-7",
      io: "input",
    }) as Record<string, unknown>;
    return {
      jsonSchema: jsonSchema as JSONSchema7,
      check(args) {
        const parsed = schema.safeParse(args);
        return parsed.success
          ? { ok: true, value: parsed.data }
          : { ok: false, message: describeIssues(parsed.error) };
      },
    };
  }
  const jsonSchema = tool.inputSchema;
  const validate = validatorFor(jsonSchema).compile(jsonSchema as object);
  return {
    jsonSchema,
    check(args) {
      return validate(args)
        ? { ok: true, value: args }
        : { ok: false, message: describeAjvErrors(validate.errors) };
    },
  };
}

/** A one-line, model-readable description of why arguments failed validation. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}
