// The caller of the serve overhead bench, in its own process so that its CPU is not counted
// against the server's (as the provider double's is not): a service calling `podkit serve` runs
// its own process, usually on its own machine. It POSTs what the bench sends it and answers with
// the status, the JSON body and its own CPU for the request, so the bench can report the caller's
// cost beside the server's.
//   startHttpTurnClient() → { post(url, body, viaFetch) → { status, json, clientCpu, sentCpu }, stop() }
// (`sentCpu`: this process's `process.cpuUsage()` just after the request was handed to the caller).
import { fork } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);

/** Forks the client and resolves once it is ready. */
export async function startHttpTurnClient() {
  const child = fork(self, ["client"], { stdio: "inherit" });
  await new Promise((resolve) => child.once("message", resolve));
  let next = 0;
  const pending = new Map();
  child.on("message", (reply) => {
    const settle = pending.get(reply.id);
    pending.delete(reply.id);
    settle?.(reply);
  });
  return {
    post: (url, body, viaFetch = false) =>
      new Promise((resolve, reject) => {
        const id = next++;
        let sentCpu;
        pending.set(id, (reply) =>
          reply.error ? reject(new Error(reply.error)) : resolve({ ...reply, sentCpu }),
        );
        child.send({ id, url, body, viaFetch });
        // Taken after the send: writing to the pipe wakes the caller's process, a cost a server
        // that is simply called does not pay (~0.2 ms of this process's CPU on this VM).
        sentCpu = process.cpuUsage();
      }),
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.disconnect();
      }),
  };
}

if (process.argv[2] === "client") {
  const agent = new Agent({ keepAlive: true });
  /** One POST with node:http and a keep-alive agent, or with the global `fetch` (undici). */
  const send = async (url, text, viaFetch) => {
    const headers = { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) };
    if (viaFetch) {
      const response = await fetch(url, { method: "POST", headers, body: text });
      return { status: response.status, json: await response.json() };
    }
    return new Promise((resolve, reject) => {
      const req = request(url, { method: "POST", agent, headers }, (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          data += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode, json: JSON.parse(data) }));
      });
      req.on("error", reject);
      req.end(text);
    });
  };
  process.on("message", async ({ id, url, body, viaFetch }) => {
    const cpu = process.cpuUsage();
    try {
      const { status, json } = await send(url, JSON.stringify(body), viaFetch);
      const used = process.cpuUsage(cpu);
      process.send({ id, status, json, clientCpu: (used.user + used.system) / 1000 });
    } catch (error) {
      process.send({ id, error: String(error) });
    }
  });
  process.on("disconnect", () => process.exit(0));
  process.send("ready");
}
