import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bash, LINUX, localHttpServer, sandboxPod } from "./support.js";

const curl = (url: string) => `curl -fsS --max-time 10 ${url}`;

describe.skipIf(!LINUX)("the sandbox's network", () => {
  it("has what these tests need: curl, and socat for the relay (CI installs it: .ci/run)", () => {
    for (const program of ["curl", "socat"]) {
      const found = spawnSync("sh", ["-c", `command -v ${program}`], { encoding: "utf8" });
      expect(found.status, `${program} is not installed`).toBe(0);
    }
  });

  it("positive control: without the sandbox curl reaches the local server", async () => {
    const server = await localHttpServer();
    const { tools } = await sandboxPod({ backend: "none" });
    expect(await bash(tools, curl(`http://127.0.0.1:${server.port}/`))).toMatchObject({
      summary: "exit code 0",
      output: "hello from the host\n",
    });
  });

  it("is none by default: curl to a local HTTP server fails", async () => {
    const server = await localHttpServer();
    const { tools } = await sandboxPod();
    const refused = await bash(tools, curl(`http://127.0.0.1:${server.port}/`));
    expect(refused.summary).not.toBe("exit code 0");
    expect(refused.output).toContain("Failed to connect");
    expect(server.hits()).toBe(0);
  });

  it("reaches an allowed host through the proxy, and only that host and port", async () => {
    const server = await localHttpServer();
    const other = await localHttpServer();
    const { tools, ws } = await sandboxPod({ allow: [`127.0.0.1:${server.port}`] });
    expect(await bash(tools, curl(`http://127.0.0.1:${server.port}/`))).toMatchObject({
      summary: "exit code 0",
      output: "hello from the host\n",
    });
    expect(server.hits()).toBe(1);
    // The same host on another port is not allowed: the proxy answers 403 and says why.
    const refused = await bash(tools, `curl -sS --max-time 10 http://127.0.0.1:${other.port}/`);
    expect(refused.output).toContain(`127.0.0.1:${other.port} is not in [sandbox.network] allow`);
    expect(other.hits()).toBe(0);
    // A tunnel (CONNECT, as HTTPS uses) is checked the same way.
    const tunnel = await bash(tools, `curl -sS --max-time 10 -p http://127.0.0.1:${other.port}/`);
    expect(tunnel.summary).not.toBe("exit code 0");
    expect(tunnel.output).toContain("403");
    expect(other.hits()).toBe(0);
    // Going around the proxy finds no network at all.
    const direct = await bash(tools, `curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:${server.port}/`);
    expect(direct.output).toContain("Failed to connect");
    expect(server.hits()).toBe(1);
    expect(existsSync(ws)).toBe(true);
  });

  it("tunnels CONNECT to an allowed host", async () => {
    const server = await localHttpServer();
    const { tools } = await sandboxPod({ allow: ["127.0.0.1"] });
    expect(await bash(tools, `${curl(`http://127.0.0.1:${server.port}/`)} -p`)).toMatchObject({
      summary: "exit code 0",
      output: "hello from the host\n",
    });
  });
});
