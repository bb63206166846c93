import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { PodEvent } from "../src/pod/events.js";
import { readAllSegments, text, usePodWorlds } from "./pod-harness.js";

// The child imports the built dist: run `pnpm build` first.
const CHILD = fileURLToPath(new URL("./crash/pod-child.mjs", import.meta.url));
const world = usePodWorlds();

function childTurn(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      out += chunk;
    });
    child.on("close", (code) => (code === 0 && out.includes("DONE") ? resolve(out) : reject(new Error(out))));
  });
}

describe("two processes, one session", () => {
  it("a pod whose session another process wrote meanwhile continues in a drift fork and says so", async () => {
    const w = await world();
    const first = await w.pod();
    w.double.enqueue(text("base"));
    await first.run("base turn");
    const sessionId = first.sessionId as string;
    const here = await w.restore(sessionId);

    w.double.enqueue(text("child answer"));
    await childTurn([w.workspace, w.home, w.double.baseUrl, w.root, sessionId]);

    w.double.enqueue(text("parent answer"));
    const events: PodEvent[] = [];
    for await (const event of here.run("turn of the parent")) events.push(event);
    expect(events.filter((event) => event.type === "drift_fork")).toHaveLength(1);

    const logs = [...(await readAllSegments(w.workspace)).values()].map((entries) => JSON.stringify(entries));
    expect(logs).toHaveLength(2);
    const child = logs.find((log) => log.includes("turn of the child")) ?? "";
    const parent = logs.find((log) => log.includes("turn of the parent")) ?? "";
    expect(child).toContain("child answer");
    expect(child).not.toContain("turn of the parent");
    expect(parent).toContain('"forked_from"');
    expect(parent).toContain("base turn");
    expect(parent).not.toContain("turn of the child");
  });
});
