import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { ListenError, OptionsError } from "../errors.js";
import { estimateTokens } from "../prompt-cache/canonical.js";
import { promptShape } from "../prompt-cache/prompt-blocks.js";
import type { CapturedRequest, ScriptedResponse, Wire } from "../types.js";
import { renderScript } from "../wire/render.js";
import { createIdSource, defaultOutputTokens } from "../wire/render-context.js";
import { asksForStream, basePath, expectedEndpoint, requestedModel } from "../wire/routes.js";
import { framesForRecordedChunks } from "../wire/sse.js";
import { captureRequest, readBody } from "./capture.js";
import { validateScriptedResponse } from "./validate-script.js";
import { writeEventStream, writeStatus } from "./write-response.js";

/** Estimated prompt tokens of a captured request: bytes / 4 of its canonical prompt blocks. */
function promptTokens(request: CapturedRequest, wire: Wire): number {
  const bytes = promptShape(request, wire).blocks.reduce(
    (sum, block) => sum + Buffer.byteLength(block.text),
    0,
  );
  return Math.max(1, estimateTokens(bytes));
}

const wires: readonly Wire[] = ["anthropic", "openai-chat", "openai-responses", "google"];

/** Message of the 500 answered when a request arrives and nothing is queued. */
export const NO_RESPONSE_LEFT = "provider double: no scripted response left";

/** A running loopback provider. */
export interface ProviderDouble {
  readonly wire: Wire;
  /** Pass as `baseURL` to the matching AI SDK provider factory. */
  readonly baseUrl: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Every request received, in order, including those answered with faults or errors. */
  readonly requests: CapturedRequest[];
  /** Queues responses; each request takes the next one. Throws ScriptError on a malformed script. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** How many responses are still queued. */
  pending(): number;
  /** Stops the server and destroys every open socket, stalled and keep-alive ones included. */
  close(): Promise<void>;
}

/** Options of {@link startProviderDouble}. */
export interface ProviderDoubleOptions {
  wire: Wire;
  responses?: ScriptedResponse[];
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** Defaults to 0 (a free port). */
  port?: number;
  /** Replays the queue cyclically forever instead of consuming it (benchmarks). */
  loop?: boolean;
  /** Clock for `receivedAt` and the timestamps inside responses; defaults to `Date.now`. */
  now?: () => number;
  /**
   * Scripted responses without `usage` report the request's own prompt size as their input tokens
   * (UTF-8 bytes / 4 of its prompt blocks, the estimate `simulatePromptCache` uses), like a provider
   * would, instead of the fixed default. For code that acts on measured context size (compaction).
   */
  measureInputTokens?: boolean;
  /**
   * Answers a request from its content before the queue is consulted; `undefined` falls through to
   * the queue. For conversations whose requests interleave unpredictably (e.g. a second worker that
   * shares the endpoint: route on its system prompt).
   */
  respond?: (request: CapturedRequest) => ScriptedResponse | undefined;
}

/**
 * Starts a real HTTP server that answers like the given provider's streaming API, from a queue of scripted
 * responses. Requests with an empty queue get HTTP 500 "provider double: no scripted response left", so a
 * test that calls the model more often than it scripted fails loudly.
 */
export async function startProviderDouble(options: ProviderDoubleOptions): Promise<ProviderDouble> {
  if (typeof options !== "object" || options === null) {
    throw new OptionsError('startProviderDouble: pass an options object, e.g. { wire: "anthropic" }');
  }
  const { wire } = options;
  if (!wires.includes(wire)) {
    throw new OptionsError(
      `startProviderDouble: wire must be one of ${wires.join(", ")}, got ${JSON.stringify(wire)}`,
    );
  }
  const now = options.now ?? Date.now;
  const loop = options.loop ?? false;
  const nextId = createIdSource();
  const queue: ScriptedResponse[] = [];
  let cursor = 0;
  const requests: CapturedRequest[] = [];
  const sockets = new Set<Socket>();
  const shutdown = new AbortController();
  const endpoint = expectedEndpoint(wire);

  const enqueue = (...responses: ScriptedResponse[]) => {
    responses.forEach((response, i) => {
      validateScriptedResponse(wire, response, `scripted response #${queue.length + i + 1}`);
    });
    queue.push(...responses);
  };
  // Validated before listening, so a bad script never leaves a server behind.
  if (options.responses) enqueue(...options.responses);
  const takeNext = (): ScriptedResponse | undefined => {
    if (loop) return queue.length === 0 ? undefined : queue[cursor++ % queue.length];
    return queue.shift();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const rawBody = await readBody(req);
    const captured = captureRequest(req, origin, rawBody, now());
    requests.push(captured);
    if (req.method !== "POST" || !endpoint.matches(captured.path)) {
      writeStatus(
        res,
        wire,
        { status: 404 },
        `provider double (${wire}): expected ${endpoint.description}, got ${req.method} ${captured.path}`,
      );
      return;
    }
    if (!asksForStream(wire, captured.body)) {
      writeStatus(
        res,
        wire,
        { status: 400 },
        `provider double (${wire}): only streaming requests are served ("stream": true)`,
      );
      return;
    }
    const routed = options.respond?.(captured);
    if (routed !== undefined) validateScriptedResponse(wire, routed, "the response of respond()");
    const next = routed ?? takeNext();
    const response =
      options.measureInputTokens && next !== undefined && "parts" in next && next.usage === undefined
        ? {
            ...next,
            usage: { inputTokens: promptTokens(captured, wire), outputTokens: defaultOutputTokens(next) },
          }
        : next;
    if (response === undefined) {
      writeStatus(res, wire, { status: 500 }, NO_RESPONSE_LEFT);
      return;
    }
    const fault = "fault" in response ? response.fault : undefined;
    if (fault?.kind === "status") {
      writeStatus(res, wire, fault);
      return;
    }
    const events =
      "parts" in response
        ? renderScript(wire, response, {
            nextId,
            now,
            model: requestedModel(wire, captured.path, captured.body),
          })
        : "chunks" in response
          ? framesForRecordedChunks(wire, response.chunks)
          : [];
    // One signal per response: aborted by close() or by the client hanging up, whichever comes first.
    const perResponse = new AbortController();
    const abort = () => perResponse.abort();
    shutdown.signal.addEventListener("abort", abort, { once: true });
    res.once("close", abort);
    try {
      await writeEventStream(res, wire, events, fault, perResponse.signal);
    } finally {
      shutdown.signal.removeEventListener("abort", abort);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        writeStatus(res, wire, { status: 500 }, `provider double failed: ${String(error)}`);
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const listenHost = options.host ?? "127.0.0.1";
  const listenPort = options.port ?? 0;
  await new Promise<void>((resolve, reject) => {
    const fail = (cause: Error) =>
      reject(
        new ListenError(
          `provider double cannot listen on ${listenHost}:${listenPort}: ${cause.message} (pass port: 0 for a free port)`,
          { cause },
        ),
      );
    server.once("error", fail);
    server.listen(listenPort, listenHost, () => {
      server.off("error", fail);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    wire,
    origin,
    baseUrl: `${origin}${basePath(wire)}`,
    requests,
    enqueue,
    pending: () => queue.length,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        shutdown.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
