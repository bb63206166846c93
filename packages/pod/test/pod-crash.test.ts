import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { definePodkitToolPackage } from "@podkit/tools";
import { describe, expect, it } from "vitest";
import {
  AFTER_INTERRUPT_TEXT_TURN_KINDS,
  expectInterruptedThenRecovered,
  kinds,
  sessionEntries,
  text,
  toolCall,
  usePodWorlds,
  type World,
} from "./pod-harness.js";

// SIGKILL a real child process running a pod (it imports the built dist: run `pnpm build` first),
// then restore the session here and run again.
const CHILD = fileURLToPath(new URL("./crash/pod-child.mjs", import.meta.url));
const world = usePodWorlds();

/** Starts the child, waits for `until` on its stdout, SIGKILLs it; resolves to the session id. */
function runAndKill(w: World, until: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, w.workspace, w.home, w.double.baseUrl, w.root], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let sessionId: string | undefined;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`child never printed ${until}: ${stdout}\n${stderr}`));
    }, 25_000); // a bound for a hung child, under the 30 s test timeout; a loaded machine needs over 15 s to start one
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      sessionId ??= /SESSION (\S+)/.exec(stdout)?.[1];
      if (stdout.includes(until)) child.kill("SIGKILL");
    });
    child.on("close", (_code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" && sessionId !== undefined && stdout.includes(until)) resolve(sessionId);
      else reject(new Error(`child ended without being killed (${signal}): ${stdout}\n${stderr}`));
    });
  });
}

/** The same `slow` tool in this process, counting executions (it must never run again). */
function countingSlow(calls: string[]) {
  return definePodkitToolPackage({
    name: "crash-tools",
    tools: () => [
      () => ({
        name: "slow",
        description: "takes forever",
        inputSchema: { type: "object" },
        execute: () => {
          calls.push("slow");
          return { summary: "ran again" };
        },
      }),
    ],
  });
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const sent = (request: any): string => JSON.stringify(request.body.messages);

describe("SIGKILL of a process running a pod, then restore and run", () => {
  it("mid tool call: the orphan is closed with the interrupt summary, the note is present, the tool never runs twice", async () => {
    const w = await world();
    w.double.enqueue(toolCall("slow", {}, "toolu_killed"));
    const sessionId = await runAndKill(w, "TOOL_STARTED");
    const calls: string[] = [];
    const pod = await w.restore(sessionId, { toolPackages: [countingSlow(calls)] });
    expect(pod.interrupted).toBe(true);
    w.double.enqueue(text("recovered"));
    expect((await pod.run("again")).text).toBe("recovered");

    const entries = await sessionEntries(w.workspace);
    expectInterruptedThenRecovered(entries, pod.catalog, "toolu_killed", true);
    expect(calls).toEqual([]);
    expect((await readFile(join(w.root, "slow-ran"), "utf8")).split("\n").filter(Boolean)).toHaveLength(1);
    expect(sent(w.double.requests[1])).toContain("toolu_killed");
  });

  it("mid tool call, then restore and resume(): the orphan is closed, never run again", async () => {
    const w = await world();
    w.double.enqueue(toolCall("slow", {}, "toolu_killed"));
    const sessionId = await runAndKill(w, "TOOL_STARTED");
    const calls: string[] = [];
    const pod = await w.restore(sessionId, { toolPackages: [countingSlow(calls)] });
    w.double.enqueue(text("carried on"));
    expect((await pod.resume()).text).toBe("carried on");
    expect(calls).toEqual([]);
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries).slice(5, 9)).toEqual(["run_errored", "invoke", "tool_result", "system_item"]);
    expect(entries[6]).toMatchObject({ trigger: "resume" });
    // The notes say the process ended — not that someone stopped the turn.
    const summary = pod.catalog.render("interrupt_tool_result_summary_process_ended", {});
    const note = pod.catalog.render("interrupt_system_note_process_ended", { trigger: "resume" });
    expect(entries[7]).toMatchObject({ item: { call_id: "toolu_killed", summary } });
    expect(entries[8]).toMatchObject({ item: { kind: "interrupt", body: note } });
    for (const body of [summary, note]) {
      expect(body).toContain("process running");
      expect(body).not.toMatch(/the user stopped|interrupted by the user/);
    }
  });

  it("a run that moved to another worker: resume({ interruptCause: 'moved' }) writes the notes of that cause", async () => {
    const w = await world();
    w.double.enqueue(toolCall("slow", {}, "toolu_moved"));
    const sessionId = await runAndKill(w, "TOOL_STARTED");
    const pod = await w.restore(sessionId, { toolPackages: [countingSlow([])] });
    w.double.enqueue(text("taken over"));
    expect((await pod.resume({ interruptCause: "moved" })).text).toBe("taken over");
    const entries = await sessionEntries(w.workspace);
    const summary = pod.catalog.render("interrupt_tool_result_summary_moved", {});
    const note = pod.catalog.render("interrupt_system_note_moved", { trigger: "resume" });
    expect(entries[7]).toMatchObject({ item: { call_id: "toolu_moved", summary } });
    expect(entries[8]).toMatchObject({ item: { kind: "interrupt", body: note } });
    expect(note).toContain("moved to another worker");
    const summaries = [
      "interrupt_tool_result_summary",
      "interrupt_tool_result_summary_process_ended",
      "interrupt_tool_result_summary_moved",
    ] as const;
    expect(new Set(summaries.map((key) => pod.catalog.render(key, {}))).size).toBe(3);
  });

  it("mid stream: nothing of the partial response is kept, the note is present, the log replays", async () => {
    const w = await world();
    w.double.enqueue({
      parts: [{ type: "text", text: "a long partial answer that never ends", chunkSize: 4 }],
      fault: { kind: "stall", afterEvents: 4, ms: 60000 },
    });
    const sessionId = await runAndKill(w, "STREAMING");
    const pod = await w.restore(sessionId);
    expect(pod.interrupted).toBe(true);
    w.double.enqueue(text("fresh answer"));
    await pod.run("again");
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries)).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "run_errored",
      ...AFTER_INTERRUPT_TEXT_TURN_KINDS,
    ]);
    expect(JSON.stringify(entries)).not.toContain("partial answer");
    expect(sent(w.double.requests[1])).toContain(
      JSON.stringify(pod.catalog.render("interrupt_system_note_process_ended", { trigger: "user" })).slice(
        1,
        -1,
      ),
    );
  });
});
