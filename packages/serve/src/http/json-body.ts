import type { Context } from "hono";
import type { z } from "zod";
import { HttpError } from "./http-error.js";

/**
 * The request's JSON body checked against `schema`. A body that is not JSON, or not
 * `Content-Type: application/json` (which also keeps other web pages from posting to a loopback
 * server without a CORS preflight), is a 400/415 naming what is wrong; a schema mismatch is a 400
 * naming the field.
 */
export async function jsonBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, "the body must be JSON", "send the header `Content-Type: application/json`");
  }
  const text = await c.req.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `malformed JSON body: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
    throw new HttpError(400, `invalid request body: ${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
