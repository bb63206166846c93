import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AbortedError, HistoryAppendError, type Item } from "@podkit/llm-worker";
import { FsStore, SessionLog, sessionsRoot } from "@podkit/session-store";
import { describe, expect, it } from "vitest";
import { caught } from "./helpers.js";
import {
  AFTER_INTERRUPT_TEXT_TURN_KINDS,
  assertLogsSound,
  expectInterruptedThenRecovered,
  kinds,
  sessionEntries,
  systemOf,
  TEXT_TURN_KINDS,
  testTools,
  text,
  toolCall,
  usePodWorlds,
} from "./pod-harness.js";

const world = usePodWorlds();

/** A tool that reports it started, then waits until its signal fires (or `release`). */
function blockingTool() {
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const run = (_args: unknown, signal: AbortSignal) =>
    new Promise<string>((resolve) => {
      started();
      signal.addEventListener("abort", () => resolve("stopped"), { once: true });
    });
  return { running, run };
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const lastMessages = (request: any) => JSON.stringify(request.body.messages);

describe("Pod persistence", () => {
  it("writes invoke, user_input, every item, usage, turn_end and run_completed in order", async () => {
    const w = await world({ toolPackages: [testTools({ ping: () => "pong" })] });
    const pod = await w.pod();
    w.double.enqueue(toolCall("ping"), text("done"));
    const result = await pod.run("go");
    expect(result).toMatchObject({ status: "finished", requests: 2, text: "done" });
    expect(result.usage).toHaveLength(2);
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries)).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "llm_usage",
      "assistant_item",
      "tool_result",
      "llm_usage",
      "assistant_item",
      "turn_end",
      "run_completed",
    ]);
    expect(entries[1]).toMatchObject({ trigger: "user" });
    expect(entries[2]).toMatchObject({ text: "go" });
    expect(entries[4]).toMatchObject({ item: { type: "tool_call", name: "ping" } });
    expect(entries[5]).toMatchObject({ item: { type: "tool_result", summary: "pong" } });
    expect(entries.at(-2)).toMatchObject({ turn: 1 });
    expect(entries.at(-1)).toMatchObject({ result: "finished", interrupted: false });
  });

  it("writes each model response (its usage and items) as one append, after the same entries in the same order", async () => {
    const w = await world({ toolPackages: [testTools({ ping: () => "pong" })] });
    const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    // The real store, its appends counted (an instance's own append is called as it is).
    const writes: string[][] = [];
    const append = store.append.bind(store);
    store.append = (ref, entries, options) => {
      writes.push(entries.map((entry) => entry.kind));
      return append(ref, entries, options);
    };
    const pod = await w.pod({ store });
    w.double.enqueue(
      {
        parts: [
          { type: "text", text: "Let me ping." },
          { type: "tool_call", name: "ping", arguments: {} },
        ],
      },
      text("done"),
    );
    await pod.run("go");
    await pod.close();
    await store.close();
    expect(writes).toEqual([
      ["invoke", "user_input"],
      ["llm_usage", "assistant_item", "assistant_item"],
      ["tool_result"],
      ["llm_usage", "assistant_item"],
      ["turn_end", "run_completed"],
    ]);
    const entries = await sessionEntries(w.workspace);
    expect(entries.slice(3, 6).map((entry) => ("item" in entry ? entry.item.type : entry.kind))).toEqual([
      "llm_usage",
      "message",
      "tool_call",
    ]);
  });

  it("writes a user turn's invoke with its message, and reports turn_start once both are durable, before the model is asked", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("first answer"), text("second answer"));
    await pod.run("one");
    const segment = () =>
      readFileSync(join(sessionsRoot(w.workspace), `${pod.sessionId}`, `${pod.segmentId}.jsonl`), "utf8");
    const seen: Record<string, { log: string; requests: number }> = {};
    pod.subscribe((event) => {
      if (event.type === "turn_start" || event.type === "turn_end")
        seen[event.type] = { log: segment(), requests: w.double.requests.length };
    });
    await pod.run("two");
    expect(seen.turn_start?.log).toContain('"text":"two"');
    expect(seen.turn_start?.requests).toBe(1);
    // Control: the listener reads the live file (at turn_end the answer is in it, absent at turn_start).
    expect(seen.turn_start?.log).not.toContain("second answer");
    expect(seen.turn_end?.log).toContain("second answer");
    expect(kinds(await sessionEntries(w.workspace)).slice(-6)).toEqual([...TEXT_TURN_KINDS]);
  });

  it("a user turn whose first write fails is closed with its invoke, and the next turn recovers", async () => {
    const w = await world();
    const store = new FsStore<Item>({ root: sessionsRoot(w.workspace) });
    let failUserInput = false;
    const append = store.append.bind(store);
    store.append = (ref, entries, options) => {
      if (failUserInput && entries.some((entry) => entry.kind === "user_input")) {
        failUserInput = false;
        return Promise.reject(new Error("disk full"));
      }
      return append(ref, entries, options);
    };
    const pod = await w.pod({ store });
    w.double.enqueue(text("first"), text("after"));
    await pod.run("one");
    failUserInput = true;
    const error = await caught(pod.run("two"));
    expect(HistoryAppendError.isInstance(error)).toBe(true);
    expect(pod.interrupted).toBe(true);
    expect(pod.history).toHaveLength(2);
    expect((await pod.run("three")).text).toBe("after");
    await pod.close();
    await store.close();
    expect(kinds(await sessionEntries(w.workspace)).slice(5)).toEqual([
      "turn_end",
      "run_completed",
      "invoke",
      "run_errored",
      ...AFTER_INTERRUPT_TEXT_TURN_KINDS,
    ]);
    expect(w.double.requests).toHaveLength(2);
  });

  it("a turn cancelled while its first answer streams keeps the user's message; only the uncommitted output is gone", async () => {
    const w = await world();
    const pod = await w.pod();
    w.double.enqueue(text("first"));
    await pod.run("one");
    const before = await sessionEntries(w.workspace);
    const controller = new AbortController();
    w.double.enqueue({
      parts: [{ type: "text", text: "late" }],
      fault: { kind: "stall", afterEvents: 0, ms: 60_000 },
    });
    const handle = pod.run("two", { signal: controller.signal });
    // Aborted while the answer is held: once the double has the request, not after a fixed delay.
    for (let i = 0; i < 2_000 && w.double.requests.length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(w.double.requests).toHaveLength(2);
    controller.abort();
    const error = await caught(handle);
    expect(AbortedError.isInstance(error)).toBe(true);
    const after = await sessionEntries(w.workspace);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(kinds(after.slice(before.length))).toEqual(["invoke", "user_input", "run_errored"]);
    expect(after[before.length + 1]).toMatchObject({ text: "two" });
    expect(JSON.stringify(after)).not.toContain("late");
    expect(pod.interrupted).toBe(true);
    expect(pod.history).toHaveLength(3);
    // The next turn tells the model the last one was interrupted, then sends both messages.
    w.double.enqueue(text("third"));
    await pod.run("three");
    const sent = lastMessages(w.double.requests.at(-1));
    expect(sent.indexOf("two")).toBeGreaterThan(-1);
    expect(sent.indexOf("three")).toBeGreaterThan(sent.indexOf("two"));
  });

  /** A pod whose first run was interrupted while its `wait` tool (call `toolu_1`) ran. */
  async function interruptedMidTool() {
    const tool = blockingTool();
    const w = await world({ toolPackages: [testTools({ wait: tool.run })] });
    const pod = await w.pod();
    w.double.enqueue(toolCall("wait", {}, "toolu_1"), text("after"));
    const handle = pod.run("start");
    await tool.running;
    pod.interrupt();
    return { w, pod, error: await caught(handle) };
  }

  it("an abort mid tool call closes the invoke; the next run closes the orphan, commits the note, then the input", async () => {
    const { w, pod, error } = await interruptedMidTool();
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(pod.interrupted).toBe(true);
    await pod.run("next");
    const entries = await sessionEntries(w.workspace);
    const { summary, note } = expectInterruptedThenRecovered(entries, pod.catalog, "toolu_1");
    const sent = lastMessages(w.double.requests[1]);
    expect(sent.indexOf(summary)).toBeGreaterThan(-1);
    expect(sent.indexOf(note)).toBeGreaterThan(sent.indexOf(summary));
    expect(sent.indexOf("next")).toBeGreaterThan(sent.indexOf(note));
  });
  it("a run aborted before it starts still keeps what the person wrote, after the interrupt closure", async () => {
    const { w, pod } = await interruptedMidTool();
    const before = await sessionEntries(w.workspace);
    // The invoke goes out with the closure of the open call; the abort keeps both, and the message.
    const error = await caught(pod.run("never sent", { signal: AbortSignal.abort() }));
    expect(AbortedError.isInstance(error)).toBe(true);
    const after = await sessionEntries(w.workspace);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(kinds(after.slice(before.length))).toEqual([
      "invoke",
      "tool_result",
      "system_item",
      "user_input",
      "run_errored",
    ]);
    expect(after.at(-2)).toMatchObject({ text: "never sent" });
    expect(pod.interrupted).toBe(true);
    w.double.enqueue(text("after"));
    await pod.run("next");
    expect(lastMessages(w.double.requests.at(-1))).toContain("never sent");
    expect(w.double.requests).toHaveLength(2);
  });

  it("resume() after an abort mid tool call closes the orphan instead of running the tool again", async () => {
    const calls: string[] = [];
    const tool = blockingTool();
    const w = await world({
      toolPackages: [testTools({ wait: (args, signal) => tool.run(args, signal) }, calls)],
    });
    const pod = await w.pod();
    w.double.enqueue(toolCall("wait", {}, "toolu_once"), text("continued"));
    const handle = pod.run("start");
    await tool.running;
    pod.interrupt();
    await caught(handle);
    expect((await pod.resume()).text).toBe("continued");
    expect(calls).toEqual(["wait"]);
    const entries = await sessionEntries(w.workspace);
    const summary = pod.catalog.render("interrupt_tool_result_summary", {});
    expect(entries.filter((e) => e.kind === "tool_result")).toEqual([
      expect.objectContaining({ item: expect.objectContaining({ call_id: "toolu_once", summary }) }),
    ]);
    expect(entries.filter((e) => e.kind === "invoke").map((e) => (e as { trigger: string }).trigger)).toEqual(
      ["user", "resume"],
    );
  });
});

describe("Pod.startSession", () => {
  it("creates the session with the rendered prompt before any run; the first run continues it byte-identically", async () => {
    const w = await world();
    const pod = await w.pod();
    const sessionId = await pod.startSession();
    expect(await pod.startSession()).toBe(sessionId);
    const [start] = await sessionEntries(w.workspace);
    expect(start).toMatchObject({ kind: "segment_start", session_id: sessionId });
    expect((start as { system_prompt: string }).system_prompt).toMatch(/^date=2026-04-15 /);
    await pod.appendExtension("test.note", { before: "the first run" });
    const restored = await w.restore(sessionId);
    w.double.enqueue(text("hi"));
    await restored.run("hello");
    expect(systemOf(w.double.requests[0] as { body: unknown })).toBe(
      (start as { system_prompt: string }).system_prompt,
    );
    expect(kinds(await sessionEntries(w.workspace))).toEqual([
      "segment_start",
      "extension",
      ...TEXT_TURN_KINDS,
    ]);
  });
});

describe("Pod.restore", () => {
  it("restores prompt, history with system-item kinds, config, turns, interrupted flag, usage and extensions; appends to the head", async () => {
    const tool = blockingTool();
    const w = await world({ toolPackages: [testTools({ wait: tool.run })] });
    const pod = await w.pod();
    pod.notify("deploy finished");
    w.double.enqueue(text("ok"), toolCall("wait"));
    await pod.run("one");
    const handle = pod.run("two");
    await tool.running;
    pod.interrupt();
    await caught(handle);
    const sessionId = pod.sessionId as string;
    const store = new FsStore({ root: sessionsRoot(w.workspace) });
    const log = await SessionLog.open(store, sessionId);
    await log.append({ kind: "extension", domain: "test.domain", payload: { pointer: 7 } });
    await store.close();

    const restored = await w.restore(sessionId);
    expect(restored.systemPrompt).toBe(pod.systemPrompt);
    expect(restored.history).toEqual(pod.history);
    expect(restored.turn).toBe(1);
    expect(restored.config).toEqual({ max_tokens: 8192 });
    expect(restored.config).toEqual(pod.config);
    expect(restored.interrupted).toBe(true);
    expect(restored.usage).toEqual(pod.usage);
    expect(restored.extensions.get("test.domain")).toEqual({ pointer: 7 });
    w.double.enqueue(text("back"));
    await restored.run("three");
    const segments = await sessionEntries(w.workspace); // still one segment: appended to the head
    expect(
      segments
        .filter((entry) => entry.kind === "system_item")
        .map((entry) => (entry as { item: { kind: string } }).item.kind),
    ).toEqual(["notification", "interrupt"]);
    expect(systemOf(w.double.requests.at(-1) as never)).toBe(pod.systemPrompt);
  });

  it("[44] the restored pod uses the full layered catalog: a user-pack interrupt_system_note reaches the model", async () => {
    const tool = blockingTool();
    const w = await world({
      files: {
        "home/.config/podkit/prompts.toml":
          '[prompt]\ninterrupt_system_note = "USER PACK: you were stopped"\n',
      },
      toolPackages: [testTools({ wait: tool.run })],
    });
    await w.reload();
    const pod = await w.pod();
    w.double.enqueue(toolCall("wait"));
    const handle = pod.run("one");
    await tool.running;
    pod.interrupt();
    await caught(handle);
    await pod.close();

    const restored = await w.restore(pod.sessionId as string);
    expect(restored.interrupted).toBe(true);
    w.double.enqueue(text("resumed"));
    await restored.run("two");
    expect(lastMessages(w.double.requests.at(-1))).toContain("USER PACK: you were stopped");
    const entries = await sessionEntries(w.workspace);
    expect(entries.find((entry) => entry.kind === "system_item")).toMatchObject({
      item: { kind: "interrupt", body: "USER PACK: you were stopped" },
    });
  });
});

describe("the shared log check (positive control)", () => {
  it("assertLogsSound rejects a log with an invoke that was never closed", async () => {
    const w = await world();
    const store = new FsStore({ root: sessionsRoot(w.workspace) });
    const log = await SessionLog.create(store, { systemPrompt: "p", config: {} });
    await log.append({ kind: "invoke", trigger: "user" });
    await log.append({ kind: "user_input", text: "never answered" });
    await expect(assertLogsSound(w.workspace)).rejects.toThrow(/never closed/);
    await log.append({ kind: "run_errored", message: "closed for the after-test check", interrupted: true });
    await store.close();
    await assertLogsSound(w.workspace);
  });
});
