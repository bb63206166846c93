// Preloaded into a child process (`NODE_OPTIONS=--import <this file>`, log file in PODKIT_NET_LOG):
// every outgoing socket connection is logged as one JSON line {host, port, path, allowed}, and one
// to anything but a loopback address is refused before it is opened. Tests read the log to prove
// what a process reached (docs/evals.md: an eval against the provider double needs no network).
import { appendFileSync } from "node:fs";
import net from "node:net";

const LOG = process.env.PODKIT_NET_LOG;
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);
const connect = net.Socket.prototype.connect;

/** Host, port or IPC path of `socket.connect(...)`'s arguments, in any of its call forms. */
function targetOf(args) {
  let [first, second] = args;
  // `net.connect` passes its normalized arguments: an array whose first element is the options.
  if (Array.isArray(first)) first = first[0];
  if (typeof first === "object" && first !== null) {
    return { host: first.host ?? "localhost", port: first.port, path: first.path };
  }
  if (typeof first === "string" && Number.isNaN(Number(first))) return { path: first };
  return { host: typeof second === "string" ? second : "localhost", port: Number(first) };
}

net.Socket.prototype.connect = function guardedConnect(...args) {
  const target = targetOf(args);
  const allowed = target.path !== undefined || LOOPBACK.has(String(target.host));
  if (LOG !== undefined) appendFileSync(LOG, `${JSON.stringify({ ...target, allowed })}\n`);
  if (allowed) return connect.apply(this, args);
  process.nextTick(() =>
    this.destroy(new Error(`network guard: a connection to ${target.host}:${target.port} was refused`)),
  );
  return this;
};
