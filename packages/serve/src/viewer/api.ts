/** The bearer token a server beyond loopback asks for, kept for this tab only. */
const TOKEN_KEY = "podkit.token";

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value: string): void {
  sessionStorage.setItem(TOKEN_KEY, value);
}

/** An API answer that was not 2xx: its status, the server's message, and the whole body it sent. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** Headers of every API call: the token when there is one. */
export function authHeaders(): Record<string, string> {
  const value = token();
  return value === null ? {} : { authorization: `Bearer ${value}` };
}

/** GET or POST a JSON route; rejects with `ApiError` (status and message) when not 2xx. */
export async function api<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: { ...authHeaders(), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const error = (parsed as { error?: string } | undefined)?.error ?? response.statusText;
    throw new ApiError(response.status, error, parsed);
  }
  return parsed as T;
}
