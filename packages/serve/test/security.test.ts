import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { isLoopbackHost, ServeTokenRequiredError, startServer } from "../src/index.js";
import { useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

const world = useServeWorlds();
const TOKEN = "0123456789abcdef0123456789abcdef";

/** GET with an explicit Host header (fetch does not let a caller set one). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("who may call the server", () => {
  it("knows loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1", "example.com", "128.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it("refuses to listen beyond loopback without PODKIT_SERVE_TOKEN", async () => {
    const w = await world();
    const attempt = startServer({
      store: w.store,
      pods: { create: never, restore: never },
      host: "0.0.0.0",
      port: 0,
    });
    await expect(attempt).rejects.toSatisfy(ServeTokenRequiredError.isInstance);
    await expect(attempt).rejects.toThrow(/refusing to listen on 0\.0\.0\.0 without a token/);
  });

  it("beyond loopback, requires the bearer token on every API route (the viewer page is public)", async () => {
    const w = await world({ server: { host: "0.0.0.0", token: TOKEN } });
    const url = `http://127.0.0.1:${w.server.port}`;
    const none = await http(`${url}/sessions`);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await http(`${url}/sessions`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(
      401,
    );
    expect((await http(`${url}/sessions`, { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(
      401,
    );
    const stream = await http(`${url}/sessions/0190f6f2-5f7e-7cc3-9a5b-000000000000/events`);
    expect(stream.status).toBe(401);
    const compare = await http(`${url}/sessions/0190f6f2-5f7e-7cc3-9a5b-000000000000/eval-compare`);
    expect(compare.status).toBe(401);
    // Positive control: the same request with the token goes through.
    const ok = await http(`${url}/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual([]);
    expect((await http(`${url}/`)).status).toBe(200);
  });

  it("on loopback without a token, answers only requests addressed to this machine (DNS rebinding)", async () => {
    const w = await world();
    const url = w.url("/sessions");
    // Positive control: the same request, addressed to 127.0.0.1, is answered.
    expect(await getWithHost(url, `127.0.0.1:${w.server.port}`)).toBe(200);
    expect(await getWithHost(url, `localhost:${w.server.port}`)).toBe(200);
    expect(await getWithHost(url, `evil.example:${w.server.port}`)).toBe(403);
    expect(await getWithHost(url, "127.0.0.1:1")).toBe(403);
  });

  it("any loopback address is loopback: --host 127.0.0.2 starts without a token and answers requests to it", async () => {
    const w = await world({ server: { host: "127.0.0.2" } });
    const url = `http://127.0.0.2:${w.server.port}/sessions`;
    expect(await getWithHost(url, `127.0.0.2:${w.server.port}`)).toBe(200);
    expect(await getWithHost(url, `127.9.8.7:${w.server.port}`)).toBe(200);
    expect(await getWithHost(url, `[::1]:${w.server.port}`)).toBe(200);
    expect((await http(url)).status).toBe(200);
    // The rebinding guard still holds: a foreign name, another port, a bare or malformed host.
    expect(await getWithHost(url, `evil.example:${w.server.port}`)).toBe(403);
    expect(await getWithHost(url, "127.0.0.2:1")).toBe(403);
    expect(await getWithHost(url, "127.0.0.2")).toBe(403);
    expect(await getWithHost(url, `127.0.0.2.evil.example:${w.server.port}`)).toBe(403);
    expect(await getWithHost(url, `[::2]:${w.server.port}`)).toBe(403);
  });

  it("sends no CORS headers unless origins are listed, then only for those", async () => {
    const preflight = (url: string, origin: string) =>
      fetch(url, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
    const closed = await world();
    const off = await preflight(closed.url("/sessions"), "https://app.example");
    expect(off.headers.get("access-control-allow-origin")).toBeNull();
    const open = await world({ server: { corsOrigins: ["https://app.example"] } });
    const allowed = await preflight(open.url("/sessions"), "https://app.example");
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await preflight(open.url("/sessions"), "https://other.example");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});

async function never(): Promise<never> {
  throw new Error("no pod should be built");
}
