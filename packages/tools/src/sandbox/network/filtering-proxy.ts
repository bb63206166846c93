import { connect, createServer, type Socket } from "node:net";
import type { HostAllowList } from "./host-allow.js";

/** The most a request head may take before the proxy gives up on it. */
const MAX_HEAD_BYTES = 16 * 1024;

/** Where an entrance of the proxy listens: a unix socket (Linux, bound into the sandbox) or a loopback port (macOS). */
export type ProxyListen = { readonly socketPath: string } | { readonly loopbackPort: 0 };

/** A connection the proxy refused: the destination asked for. */
export interface RefusedConnection {
  readonly host: string;
  readonly port: number;
}

/**
 * One way into the proxy, opened for one sandboxed process: its own listener, so what the proxy
 * refuses through it is known to be that process's doing (`refused`, in order).
 */
export interface ProxyEntrance {
  /** The unix socket, when listening on one. */
  readonly socketPath: string | undefined;
  /** The loopback port, when listening on one. */
  readonly port: number | undefined;
  readonly refused: readonly RefusedConnection[];
  /** Stops listening (connections already open run on until the process ends); idempotent. */
  close(): Promise<void>;
}

/**
 * The host side of a sandbox's network: an HTTP proxy that only reaches the allowed hosts. It
 * serves `CONNECT host:port` (TLS and anything else tunnelled) and plain `GET http://host/…`
 * requests; every connection is checked once, at its start, and goes to that one destination only
 * (plain requests get `Connection: close`, so a second request on the same connection cannot name
 * another host). Anything else is refused with a 403 naming the host and the manifest key. Each
 * process reaches it through an entrance of its own (`open`), which records what it was refused.
 */
export class FilteringProxy {
  private readonly sockets = new Set<Socket>();
  private readonly entrances = new Set<ProxyEntrance>();

  constructor(private readonly allow: HostAllowList) {}

  /** Opens an entrance for one process. */
  async open(listen: ProxyListen): Promise<ProxyEntrance> {
    const refused: RefusedConnection[] = [];
    const server = createServer((client) => this.accept(client, refused));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      if ("socketPath" in listen) server.listen(listen.socketPath, resolve);
      else server.listen(0, "127.0.0.1", resolve);
    });
    const address = server.address();
    let closing: Promise<void> | undefined;
    const entrance: ProxyEntrance = {
      socketPath: "socketPath" in listen ? listen.socketPath : undefined,
      port: typeof address === "object" && address !== null ? address.port : undefined,
      refused,
      close: () => {
        // Closing a unix-socket server also removes its socket file.
        closing ??= new Promise<void>((resolve) => server.close(() => resolve()));
        this.entrances.delete(entrance);
        return closing;
      },
    };
    this.entrances.add(entrance);
    return entrance;
  }

  /** Closes every entrance and every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([...this.entrances].map((entrance) => entrance.close()));
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private accept(client: Socket, refused: RefusedConnection[]): void {
    this.track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) {
        if (head.length > MAX_HEAD_BYTES) refuse(client, 431, "request head too large");
        return;
      }
      client.off("data", onData);
      client.pause();
      this.forward(client, head.subarray(0, end).toString("latin1"), head.subarray(end + 4), refused);
    };
    client.on("data", onData);
  }

  private forward(client: Socket, head: string, rest: Buffer, refused: RefusedConnection[]): void {
    const allow = this.allow;
    const [requestLine = "", ...headers] = head.split("\r\n");
    const [method = "", target = "", version = "HTTP/1.1"] = requestLine.split(" ");
    let destination: { host: string; port: number } | undefined;
    let firstBytes: Buffer | undefined;
    if (method === "CONNECT") {
      destination = splitHostPort(target, 443);
    } else if (/^http:\/\//i.test(target)) {
      const url = safeUrl(target);
      if (url !== undefined) {
        destination = { host: url.hostname, port: url.port === "" ? 80 : Number(url.port) };
        const kept = headers.filter((line) => !/^(proxy-)?connection\s*:/i.test(line));
        const lines = [
          `${method} ${url.pathname}${url.search} ${version}`,
          ...kept,
          "Connection: close",
          "",
          "",
        ];
        firstBytes = Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), rest]);
      }
    }
    if (destination === undefined) {
      refuse(client, 400, "the sandbox's proxy takes CONNECT host:port or an http:// URL");
      return;
    }
    if (!allow.allows(destination.host, destination.port)) {
      refused.push({ host: destination.host, port: destination.port });
      refuse(
        client,
        403,
        `${destination.host}:${destination.port} is not in [sandbox.network] allow (${allow.allow.join(", ") || "empty"})`,
      );
      return;
    }
    const upstream = connect(destination.port, destination.host.replace(/^\[|\]$/g, ""));
    this.track(upstream);
    upstream.once("connect", () => {
      if (firstBytes === undefined) {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (rest.length > 0) upstream.write(rest);
      } else {
        upstream.write(firstBytes);
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.once("error", (error: NodeJS.ErrnoException) => {
      if (!client.destroyed)
        refuse(
          client,
          502,
          `cannot reach ${destination.host}:${destination.port} (${error.code ?? error.message})`,
        );
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.end());
  }
}

function refuse(client: Socket, status: number, why: string): void {
  const reason = {
    400: "Bad Request",
    403: "Forbidden",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
  }[status];
  const body = `podkit sandbox: ${why}\n`;
  client.end(
    `HTTP/1.1 ${status} ${reason ?? "Error"}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function splitHostPort(target: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(target);
  if (!match) return undefined;
  return { host: match[1] as string, port: match[2] === undefined ? defaultPort : Number(match[2]) };
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
