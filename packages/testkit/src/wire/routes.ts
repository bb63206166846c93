import type { Wire } from "../types.js";

/** The path prefix of `baseUrl`, matching each provider's official base URL. */
export function basePath(wire: Wire): string {
  return wire === "google" ? "/v1beta" : "/v1";
}

/** The endpoint a streaming request of this wire must hit, for a clear 404 when a client is misconfigured. */
export function expectedEndpoint(wire: Wire): { matches(path: string): boolean; description: string } {
  switch (wire) {
    case "anthropic":
      return { matches: (path) => path.endsWith("/messages"), description: "POST <baseUrl>/messages" };
    case "openai-chat":
      return {
        matches: (path) => path.endsWith("/chat/completions"),
        description: "POST <baseUrl>/chat/completions",
      };
    case "openai-responses":
      return { matches: (path) => path.endsWith("/responses"), description: "POST <baseUrl>/responses" };
    case "google":
      return {
        matches: (path) => /\/models\/[^/]+:streamGenerateContent$/.test(path),
        description: "POST <baseUrl>/models/<model>:streamGenerateContent?alt=sse",
      };
  }
}

/** The model id the request names (body `model`, or the Gemini path segment), echoed in responses. */
export function requestedModel(wire: Wire, path: string, body: unknown): string {
  if (wire === "google") return decodeURIComponent(/\/models\/([^/:]+):/.exec(path)?.[1] ?? "gemini-double");
  const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
  return typeof model === "string" ? model : `${wire}-double`;
}

/** Whether the request asked for a stream; the double only speaks streaming (Gemini streams by endpoint). */
export function asksForStream(wire: Wire, body: unknown): boolean {
  if (wire === "google") return true;
  return typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true;
}
