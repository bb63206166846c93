import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** A response held mid-stream: `held` resolves once it stopped; `release()` lets the rest through. */
export interface HeldResponse {
  held: Promise<void>;
  release(): void;
}

/** A proxy in front of the provider double that can stop one streamed response until released. */
export interface StreamGate {
  url: string;
  /** Holds the `request`-th request from now (1 = the next) after `afterEvents` SSE events. */
  hold(request: number, afterEvents: number): HeldResponse;
  close(): Promise<void>;
}

/**
 * Starts a proxy to `target` (the provider double's base URL). A test points the pod's model at
 * it to pause a response exactly as long as it needs — e.g. while the page reloads — instead of a
 * fixed stall that must outlast the slowest machine.
 */
export async function startStreamGate(target: string): Promise<StreamGate> {
  let seen = 0;
  const gates = new Map<number, { afterEvents: number; stopped: () => void; opened: Promise<void> }>();
  const server = createServer((req, res) => {
    seen += 1;
    const gate = gates.get(seen);
    const upstream = request(new URL(req.url ?? "/", new URL(target).origin), {
      method: req.method,
      headers: req.headers,
    });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (gate === undefined) {
        answer.pipe(res);
        return;
      }
      answer.setEncoding("utf8");
      let events = 0;
      let holding = false;
      let released = false;
      const later: string[] = [];
      answer.on("data", (chunk: string) => {
        if (holding) {
          if (released) res.write(chunk);
          else later.push(chunk);
          return;
        }
        // Forward whole events until the count is reached, then the rest waits for the release.
        let rest = chunk;
        for (let end = rest.indexOf("\n\n"); end !== -1 && events < gate.afterEvents; ) {
          res.write(rest.slice(0, end + 2));
          rest = rest.slice(end + 2);
          events += 1;
          end = rest.indexOf("\n\n");
        }
        if (events < gate.afterEvents) {
          res.write(rest);
          return;
        }
        holding = true;
        answer.pause();
        gate.stopped();
        later.push(rest);
        void gate.opened.then(() => {
          released = true;
          res.write(later.join(""));
          answer.resume();
        });
      });
      answer.on("end", () => {
        if (!holding || released) res.end();
        else void gate.opened.then(() => res.end());
      });
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // The double's base path (`/v1`) stays in the URL the pod is given; requests keep their path.
    url: `http://127.0.0.1:${port}${new URL(target).pathname}`,
    hold(nth, afterEvents) {
      let stopped!: () => void;
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        stopped = resolve;
      });
      const opened = new Promise<void>((resolve) => {
        release = resolve;
      });
      gates.set(seen + nth, { afterEvents, stopped, opened });
      return { held, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const gate of gates.values()) gate.stopped();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
