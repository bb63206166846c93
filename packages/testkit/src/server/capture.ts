import type { IncomingMessage } from "node:http";
import type { CapturedRequest } from "../types.js";

/** Reads the whole request body as UTF-8 text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Builds the captured record of a request; a body that is not JSON is kept raw with `body` undefined. */
export function captureRequest(
  req: IncomingMessage,
  origin: string,
  rawBody: string,
  receivedAt: number,
): CapturedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const url = new URL(req.url ?? "/", origin);
  let body: unknown;
  try {
    body = rawBody.length > 0 ? JSON.parse(rawBody) : undefined;
  } catch {
    body = undefined;
  }
  return {
    method: req.method ?? "GET",
    path: url.pathname,
    url: url.href,
    headers,
    body,
    rawBody,
    receivedAt,
  };
}
