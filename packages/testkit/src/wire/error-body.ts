import type { Wire } from "../types.js";

const anthropicTypes: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const googleStatuses: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

const openaiCodes: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_api_key",
  403: "permission_denied",
  404: "model_not_found",
  429: "rate_limit_exceeded",
};

/**
 * The JSON error body a provider returns with an HTTP error status, so the AI SDK's error handler parses
 * the message out of it exactly as it would from the real service.
 */
export function errorBody(wire: Wire, status: number, message: string): string {
  switch (wire) {
    case "anthropic":
      return JSON.stringify({
        type: "error",
        error: {
          type: anthropicTypes[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"),
          message,
        },
      });
    case "openai-chat":
    case "openai-responses": {
      const code = openaiCodes[status] ?? (status >= 500 ? "server_error" : "invalid_request_error");
      const type = status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
      return JSON.stringify({ error: { message, type, param: null, code } });
    }
    case "google":
      return JSON.stringify({
        error: {
          code: status,
          message,
          status: googleStatuses[status] ?? (status >= 500 ? "INTERNAL" : "UNKNOWN"),
        },
      });
  }
}
