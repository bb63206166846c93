import { resolve } from "node:path";
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ToolSandbox, WrappedCommand } from "../sandbox/sandbox.js";
import type { CheckedMcpServerSpec } from "./server-config.js";

/** How much of a stdio server's stderr is kept for error messages (the end is what explains a crash). */
const STDERR_TAIL_BYTES = 2048;

/** A transport before `connect`, with what the connection needs to report on and clean up after it. */
export interface McpTransport {
  readonly transport: Transport;
  readonly kind: "stdio" | "http";
  /** The last bytes a stdio server wrote to stderr ("" for HTTP). */
  stderrTail(): string;
  /** The stdio child's pid once spawned, even after it exited (null for HTTP or before the spawn). */
  pid(): number | null;
  /** Ends the server-side session (HTTP `DELETE`); nothing for stdio. */
  terminateSession(): Promise<void>;
  /** A stdio server started through the sandbox: what the sandbox refuses it (undefined otherwise). */
  readonly sandboxed: WrappedCommand | undefined;
}

/** The environment variables a `headers_env` entry names, read now; the message never carries a value. */
function resolveHeaders(
  config: CheckedMcpServerSpec,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [header, variable] of Object.entries(config.headers_env ?? {})) {
    const value = env[variable];
    if (value === undefined || value === "") {
      throw new Error(
        `header "${header}" takes its value from the environment variable ${variable}, which is not set; set it before starting the pod or remove the header from headers_env`,
      );
    }
    headers[header] = value;
  }
  return headers;
}

/**
 * `fetch` with the request headers the 2026-07-28 revision mirrors from a POST's body:
 * `MCP-Protocol-Version` (the version in the body's `_meta`), `Mcp-Method`, and `Mcp-Name` for a
 * call, read or get (a value that is not plain header-safe ASCII in the `=?base64?…?=` form). Only a
 * request whose `_meta` names a version gets them, so a legacy session's requests go out unchanged.
 */
function withRequestHeaders(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const mirrored = mirroredHeaders(init?.body);
    if (mirrored === undefined) return inner(input, init);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(mirrored)) headers.set(name, value);
    return inner(input, { ...init, headers });
  };
}

function mirroredHeaders(body: unknown): Record<string, string> | undefined {
  if (typeof body !== "string") return undefined;
  let message: { method?: unknown; params?: Record<string, unknown> };
  try {
    message = JSON.parse(body) as typeof message;
  } catch {
    return undefined;
  }
  const meta = message.params?._meta as Record<string, unknown> | undefined;
  const version = meta?.["io.modelcontextprotocol/protocolVersion"];
  if (typeof version !== "string" || typeof message.method !== "string") return undefined;
  const headers: Record<string, string> = { "MCP-Protocol-Version": version, "Mcp-Method": message.method };
  const name = message.params?.name ?? message.params?.uri;
  if (typeof name === "string") headers["Mcp-Name"] = headerValue(name);
  return headers;
}

/** A header value as the revision encodes it: as is when plain visible ASCII, else `=?base64?…?=`. */
export function headerValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value);
  if (plain && !(value.startsWith("=?base64?") && value.endsWith("?="))) return value;
  return `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

/**
 * A stdio server's environment: the SDK's short list of harmless variables (`HOME`, `PATH`,
 * `USER`, …) taken from the pod's environment, then the entry's own `env`. The SDK fills that
 * list from `process.env` underneath whatever it is given, so a name the pod's environment
 * lacks is passed as `undefined`, which Node's spawn leaves out.
 */
function stdioEnvironment(
  config: CheckedMcpServerSpec,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string | undefined> = {};
  for (const name of DEFAULT_INHERITED_ENV_VARS) {
    const value = env[name];
    // As the SDK does: a value starting with "()" is a shell function, not inherited.
    out[name] = value === undefined || value.startsWith("()") ? undefined : value;
  }
  return { ...out, ...config.env } as Record<string, string>;
}

/**
 * Builds the SDK transport for one server: a stdio child started in `cwd` (relative to the
 * workspace; the workspace when absent) with `stdioEnvironment`, inside the pod's sandbox when one
 * is given (the same file rules and network as `bash`), stderr piped and kept as a tail, so a
 * server's chatter never lands on the pod's terminal; or a Streamable HTTP client whose
 * `headers_env` values come from `env`. Throws when a header's variable is missing, or when the
 * sandbox refuses to start anything (`SandboxUnavailableError`).
 */
export async function openTransport(
  config: CheckedMcpServerSpec,
  env: Readonly<Record<string, string | undefined>>,
  workspace: string,
  sandbox?: ToolSandbox,
): Promise<McpTransport> {
  if (config.url !== undefined) {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: resolveHeaders(config, env) },
      fetch: withRequestHeaders(fetch),
    });
    return {
      transport,
      kind: "http",
      stderrTail: () => "",
      pid: () => null,
      terminateSession: () => transport.terminateSession(),
      sandboxed: undefined,
    };
  }
  const environment = stdioEnvironment(config, env);
  const defined = Object.fromEntries(Object.entries(environment).filter(([, value]) => value !== undefined));
  const command = {
    file: config.command as string,
    args: config.args ?? [],
    // A server works on the pod's workspace unless told otherwise, never on wherever the host process happens to run.
    cwd: resolve(workspace, config.cwd ?? "."),
    env: defined,
  };
  const wrapped = sandbox === undefined ? undefined : await sandbox.wrap(command);
  const started = wrapped ?? command;
  const transport = new StdioClientTransport({
    command: started.file,
    args: [...started.args],
    // The names the pod's environment lacks stay `undefined`, so the SDK does not fill them in.
    env: { ...environment, ...started.env },
    cwd: started.cwd,
    stderr: "pipe",
  });
  // Recorded at spawn and kept: the SDK forgets the child as soon as it starts closing it (which
  // its Client does by itself when the handshake fails), and we still have to see it gone.
  let spawnedPid: number | null = null;
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    spawnedPid = transport.pid;
  };
  let tail = "";
  // With stderr "pipe" the SDK hands out its PassThrough before start, so nothing is lost; reading
  // it also keeps a chatty server from blocking on a full pipe.
  transport.stderr?.on("data", (chunk: Buffer | string) => {
    tail = (tail + chunk.toString()).slice(-STDERR_TAIL_BYTES);
  });
  return {
    transport,
    kind: "stdio",
    stderrTail: () => tail.trim(),
    pid: () => spawnedPid,
    terminateSession: async () => {},
    sandboxed: wrapped,
  };
}
