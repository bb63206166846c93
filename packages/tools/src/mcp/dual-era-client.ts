import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { AnySchema, SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { Protocol, type RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  InitializeResultSchema,
  LATEST_PROTOCOL_VERSION,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * The stateless protocol revision podkit speaks besides the SDK's legacy ones: no `initialize`
 * handshake and no session; every request carries its version and the client's identity in `_meta`.
 * `@modelcontextprotocol/sdk` 1.32.2 knows only the handshake-based revisions (up to 2025-11-25).
 */
export const STATELESS_PROTOCOL_VERSION = "2026-07-28";

/** Which protocol a server speaks: `modern` (stateless, per-request `_meta`) or `legacy` (`initialize`). */
export type McpEra = "modern" | "legacy";

const CLIENT_INFO = { name: "podkit", version: "1" } as const;

/** The `_meta` every modern request carries. */
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL_VERSION,
  "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
  "io.modelcontextprotocol/clientCapabilities": {},
} as const;

/** The JSON-RPC errors only a modern server sends: header mismatch, missing capability, unsupported version. */
const MODERN_ERROR_CODES: ReadonlySet<number> = new Set([-32020, -32021, -32022]);
const UNSUPPORTED_VERSION = -32022;

const DiscoverResultSchema = z.looseObject({
  supportedVersions: z.array(z.string()),
  capabilities: z
    .looseObject({ tools: z.looseObject({ listChanged: z.boolean().optional() }).optional() })
    .optional(),
});

/** The longest the `server/discover` probe waits for a server that might ignore it (a legacy one may). */
const PROBE_MS = 10_000;

/**
 * An SDK `Client` that speaks both eras of MCP. `connect` starts the transport, then probes with
 * `server/discover` as the 2026-07-28 revision says a dual-era client should: a discover result
 * naming 2026-07-28 makes the connection modern (every request then carries the stateless
 * `_meta`); any error that is not a modern one, or silence, makes it legacy, and the `initialize`
 * handshake follows on the same transport (a stdio server is never started twice).
 */
export class DualEraClient extends Client {
  private spoken: McpEra | undefined;
  private discovered: z.infer<typeof DiscoverResultSchema> | undefined;

  constructor() {
    super(CLIENT_INFO, { capabilities: {} });
  }

  /** The era found by `connect` (undefined before). */
  get era(): McpEra | undefined {
    return this.spoken;
  }

  /** True when the server says it sends `notifications/tools/list_changed` (modern: from `server/discover`). */
  get announcesToolChanges(): boolean {
    if (this.spoken === "modern") return this.discovered?.capabilities?.tools?.listChanged === true;
    return this.getServerCapabilities()?.tools?.listChanged === true;
  }

  override async connect(transport: Transport, options?: RequestOptions): Promise<void> {
    // The SDK's Protocol.connect: attach and start the transport, without Client's handshake.
    await Protocol.prototype.connect.call(this, transport);
    try {
      const discovered = await this.probe(options);
      if (discovered !== undefined) {
        this.discovered = discovered;
        this.spoken = "modern";
        return;
      }
      this.spoken = "legacy";
      await this.initialize(transport, options);
    } catch (error) {
      void this.close();
      throw error;
    }
  }

  /** A liveness check: `ping` for a legacy server, `server/discover` for a modern one (which has no ping). */
  override async ping(options?: RequestOptions): Promise<Record<string, never>> {
    if (this.spoken !== "modern") return (await super.ping(options)) as Record<string, never>;
    await this.request(
      { method: "server/discover", params: {} } as unknown as Parameters<Client["request"]>[0],
      DiscoverResultSchema,
      options,
    );
    return {};
  }

  override request<T extends AnySchema>(
    request: Parameters<Client["request"]>[0],
    resultSchema: T,
    options?: RequestOptions,
  ): Promise<SchemaOutput<T>> {
    if (this.spoken === "legacy" || request.method === "initialize") {
      return super.request(request, resultSchema, options);
    }
    const params = (request.params ?? {}) as Record<string, unknown>;
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    return super.request(
      { ...request, params: { ...params, _meta: { ...meta, ...MODERN_META } } } as typeof request,
      resultSchema,
      options,
    );
  }

  /**
   * `server/discover`: the result when the server is modern and speaks 2026-07-28; undefined when
   * it is legacy. A modern server that speaks only other versions is an error naming them.
   */
  private async probe(options?: RequestOptions): Promise<z.infer<typeof DiscoverResultSchema> | undefined> {
    let result: z.infer<typeof DiscoverResultSchema>;
    try {
      result = await this.request(
        { method: "server/discover", params: {} } as unknown as Parameters<Client["request"]>[0],
        DiscoverResultSchema,
        { ...options, timeout: Math.min(options?.timeout ?? PROBE_MS, PROBE_MS) },
      );
    } catch (error) {
      options?.signal?.throwIfAborted();
      const modern = modernErrorOf(error);
      if (modern === undefined) return undefined;
      if (modern.code === UNSUPPORTED_VERSION) throw unsupported(modern.supported);
      throw new Error(
        `the server rejected podkit's ${STATELESS_PROTOCOL_VERSION} request: ${modern.message}`,
      );
    }
    if (!result.supportedVersions.includes(STATELESS_PROTOCOL_VERSION)) {
      // A modern server without our modern version may still accept the handshake of a legacy one.
      if (result.supportedVersions.some((v) => SUPPORTED_PROTOCOL_VERSIONS.includes(v))) return undefined;
      throw unsupported(result.supportedVersions);
    }
    return result;
  }

  /** The legacy handshake, as the SDK's `Client.connect` runs it (the transport is already started). */
  private async initialize(transport: Transport, options?: RequestOptions): Promise<void> {
    const result = await this.request(
      {
        method: "initialize",
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
      },
      InitializeResultSchema,
      options,
    );
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
      throw new Error(`the server's protocol version is not supported: ${result.protocolVersion}`);
    }
    // Read back by getServerCapabilities(); the SDK keeps them in a field of its own.
    (this as unknown as { _serverCapabilities: unknown })._serverCapabilities = result.capabilities;
    transport.setProtocolVersion?.(result.protocolVersion);
    await this.notification({ method: "notifications/initialized" });
  }
}

function unsupported(versions: readonly string[]): Error {
  return new Error(
    `the server speaks MCP ${versions.join(", ") || "(no version named)"}, and podkit speaks ${STATELESS_PROTOCOL_VERSION} and ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
  );
}

/**
 * The modern JSON-RPC error in `error`, if it is one: over stdio a JSON-RPC error response
 * (`McpError`), over HTTP the body of a 4xx the SDK's transport put in its message.
 */
function modernErrorOf(error: unknown): { code: number; message: string; supported: string[] } | undefined {
  let code: number | undefined;
  let message = "";
  let data: unknown;
  if (error instanceof McpError) {
    code = error.code;
    message = error.message;
    data = error.data;
  } else if (error instanceof StreamableHTTPError) {
    const body = /\{[\s\S]*\}\s*$/.exec(error.message)?.[0];
    try {
      const parsed =
        body === undefined
          ? undefined
          : (JSON.parse(body) as { error?: { code?: unknown; message?: unknown; data?: unknown } });
      if (typeof parsed?.error?.code === "number") {
        code = parsed.error.code;
        message = String(parsed.error.message ?? "");
        data = parsed.error.data;
      }
    } catch {
      return undefined;
    }
  }
  if (code === undefined || !MODERN_ERROR_CODES.has(code)) return undefined;
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return {
    code,
    message,
    supported: Array.isArray(supported) ? supported.filter((v): v is string => typeof v === "string") : [],
  };
}
