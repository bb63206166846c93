import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of the test database, so a test can take "the database" away from a worker
 * (every connection reset, new ones refused) and bring it back, without touching the shared server.
 */
export interface DatabaseProxy {
  /** The database URL through the proxy. */
  url: string;
  /** Resets every connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startDatabaseProxy(target: string): Promise<DatabaseProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const server = connect(Number(upstream.port || 5432), upstream.hostname);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(server).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(typeof address === "object" && address !== null ? address.port : 0);
  return {
    url: url.toString(),
    cut() {
      down = true;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    restore() {
      down = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
