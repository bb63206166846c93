import type { JSONSchema7 } from "@ai-sdk/provider";
import { z } from "zod";
import type { Tool } from "./tool.js";

/** A tool's input schema in both forms the worker needs. */
export interface CompiledToolSchema {
  /** Sent to the provider. */
  jsonSchema: JSONSchema7;
  /** Validates parsed arguments. */
  validator: z.ZodType;
}

function isZodSchema(schema: unknown): schema is z.ZodType {
  return typeof schema === "object" && schema !== null && "_zod" in schema;
}

/**
 * Turns a tool's `inputSchema` (zod or JSON Schema) into a JSON Schema for the provider and a
 * validator for the arguments. Throws when the schema cannot be converted.
 */
export function compileToolSchema(tool: Tool): CompiledToolSchema {
  if (isZodSchema(tool.inputSchema)) {
    const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(tool.inputSchema, {
      target: "draft-7",
      io: "input",
    }) as Record<string, unknown>;
    return { jsonSchema: jsonSchema as JSONSchema7, validator: tool.inputSchema };
  }
  const jsonSchema = tool.inputSchema;
  return { jsonSchema, validator: z.fromJSONSchema(jsonSchema as never) };
}

/** A one-line, model-readable description of why arguments failed validation. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}
