import type { Item } from "@podkit/llm-worker";
import { type Entry, FsStore, SessionLog, sessionsRoot } from "@podkit/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryWorkerError } from "../src/errors.js";
import { flattenEntries } from "../src/extract/flat-lines.js";
import { EXTRACT_POINTER_DOMAIN } from "../src/extract/pointer.js";
import { runMemoryExtract } from "../src/extract/run-memory-extract.js";
import { callTool, say, stagingFiles, useMemoryWorlds } from "./helpers.js";

const world = useMemoryWorlds();
const stores: FsStore<Item>[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

const RAW_OUTPUT = "RAW-TOOL-OUTPUT-never-sent-to-extract";
const REASONING = "PRIVATE-REASONING-never-sent-to-extract";

/** A real session log with one turn: input, reasoning, a tool call with raw output, an answer. */
async function sessionWithOneTurn(workspace: string) {
  const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
  stores.push(store);
  const log = await SessionLog.create<Item>(store, { systemPrompt: "sys", config: {} });
  await log.appendMany([
    { kind: "invoke", trigger: "user" },
    {
      kind: "user_input",
      text: "Set up the repo. We use pnpm workspaces because npm hoisting broke builds.",
    },
    { kind: "assistant_item", item: { type: "reasoning", text: REASONING } },
    {
      kind: "assistant_item",
      item: { type: "tool_call", call_id: "c1", name: "read_file", arguments: '{"path":"package.json"}' },
    },
    {
      kind: "tool_result",
      item: {
        type: "tool_result",
        call_id: "c1",
        summary: "read package.json (12 lines)",
        content: RAW_OUTPUT,
      },
    },
    {
      kind: "assistant_item",
      item: {
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: "Done: pnpm-workspace.yaml added." }],
      },
    },
    { kind: "turn_end", turn: 1 },
    { kind: "run_completed", result: "finished", interrupted: false },
  ]);
  return { store, log, sessionId: log.state.sessionId, segmentId: log.state.segmentId };
}

async function entriesOf(store: FsStore<Item>, sessionId: string, segmentId: string) {
  const out: Entry<Item>[] = [];
  for await (const e of store.readAll({ sessionId, segmentId })) out.push(e);
  return out;
}

const EXTRACTED = {
  decisions: [
    { topic: "pnpm workspace layout", decision: "Use pnpm workspaces", reason: "npm hoisting broke builds" },
  ],
  discussions: [],
  attempts: [],
  requests: [],
};

describe("extract", () => {
  it("sends flat lines without tool-result content or reasoning, with the catalog prompt and only write_extracted", async () => {
    const w = await world();
    const s = await sessionWithOneTurn(w.workspace);
    w.double.enqueue(callTool("write_extracted", EXTRACTED), say("ok"));
    const result = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    expect(result.status).toBe("extracted");

    const request = w.double.requests[0]?.body;
    const sent = JSON.stringify(request.messages);
    // Positive control: the log really holds both, so their absence is the filter's doing.
    const logged = JSON.stringify(await entriesOf(s.store, s.sessionId, s.segmentId));
    expect(logged).toContain(RAW_OUTPUT);
    expect(logged).toContain(REASONING);
    expect(sent).not.toContain(RAW_OUTPUT);
    expect(sent).not.toContain(REASONING);
    expect(request.messages[0].content[0].text).toBe(
      [
        "[User] Set up the repo. We use pnpm workspaces because npm hoisting broke builds.",
        "[ToolCall] read_file",
        "[ToolResult] read package.json (12 lines)",
        "[Assistant] Done: pnpm-workspace.yaml added.",
      ].join("\n"),
    );
    const system = request.system.map((b: { text: string }) => b.text).join("");
    expect(system).toBe(w.catalog.render("memory_extract_system", { language: "English" }));
    expect(request.tools.map((t: { name: string }) => t.name)).toEqual(["write_extracted"]);
  });

  it("writes one staging file with the source attached by code, then advances the pointer in the session log", async () => {
    const w = await world();
    const s = await sessionWithOneTurn(w.workspace);
    w.double.enqueue(callTool("write_extracted", EXTRACTED), say("ok"));
    await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    const [staging, ...rest] = await stagingFiles(w.workspace);
    expect(rest).toEqual([]);
    // Entries 1..8 of the segment (0 is its segment_start): invoke through run_completed.
    expect(staging).toMatchObject({
      session_id: s.sessionId,
      source: { segment_id: s.segmentId, range: [1, 8] },
      created_at: "2026-04-15T09:30:00Z",
      ...EXTRACTED,
    });
    const entries = await entriesOf(s.store, s.sessionId, s.segmentId);
    expect(entries.at(-1)).toMatchObject({
      kind: "extension",
      domain: EXTRACT_POINTER_DOMAIN,
      payload: { segment_id: s.segmentId, next_entry: 9 },
    });
    // Nothing new since: no request, nothing staged.
    const again = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    expect(again.status).toBe("nothing_new");
    expect(w.double.requests).toHaveLength(2);
  });

  it("an empty result writes no staging file and still advances the pointer", async () => {
    const w = await world();
    const s = await sessionWithOneTurn(w.workspace);
    w.double.enqueue(
      callTool("write_extracted", { decisions: [], discussions: [], attempts: [], requests: [] }),
      say("ok"),
    );
    const result = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    expect(result).toMatchObject({ status: "empty", range: [1, 8], pointer: { next_entry: 9 } });
    expect(await stagingFiles(w.workspace)).toEqual([]);
  });

  it("a failure leaves the pointer where it was, and the next extract reads the same range", async () => {
    const w = await world();
    const s = await sessionWithOneTurn(w.workspace);
    w.double.enqueue({ fault: { kind: "status", status: 500 } });
    const failed = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId }).catch(
      (e) => e,
    );
    expect(MemoryWorkerError.isInstance(failed)).toBe(true);
    w.double.enqueue(say("I see nothing to record."));
    const silent = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId }).catch(
      (e) => e,
    );
    expect(MemoryWorkerError.isInstance(silent) && silent.message).toContain(
      "without calling write_extracted",
    );
    const entries = await entriesOf(s.store, s.sessionId, s.segmentId);
    expect(entries.filter((e) => e.kind === "extension")).toEqual([]);
    expect(await stagingFiles(w.workspace)).toEqual([]);

    w.double.enqueue(callTool("write_extracted", EXTRACTED), say("ok"));
    await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    const [staging] = await stagingFiles(w.workspace);
    expect(staging).toMatchObject({ source: { range: [1, 8] } });
    expect(w.double.requests.at(-2)?.rawBody).toBe(w.double.requests[0]?.rawBody);
  });

  it("a model answering with invalid arguments gets the schema error back and may fix it", async () => {
    const w = await world();
    const s = await sessionWithOneTurn(w.workspace);
    w.double.enqueue(
      callTool("write_extracted", { decisions: [{ decision: "no topic" }] }),
      callTool("write_extracted", EXTRACTED),
      say("ok"),
    );
    const result = await runMemoryExtract({ ...w.job(), sessions: s.store, sessionId: s.sessionId });
    expect(result.status).toBe("extracted");
    expect(JSON.stringify(w.double.requests[1]?.body.messages)).toContain(
      'invalid arguments for \\"write_extracted\\"',
    );
  });

  it("the threshold gates extraction by estimated tokens", async () => {
    const w = await world();
    const s = await sessionWithOneTurn(w.workspace);
    const result = await runMemoryExtract({
      ...w.job(),
      sessions: s.store,
      sessionId: s.sessionId,
      threshold: 1_000_000,
    });
    expect(result).toMatchObject({ status: "below_threshold", threshold: 1_000_000 });
    expect(w.double.requests).toEqual([]);
  });
});

describe("the extract input", () => {
  it("flattenEntries leaves out context blocks (which carry memory itself) and keeps notifications", () => {
    const text = flattenEntries([
      { kind: "system_item", ts: 1, item: { kind: "context", body: "[Context update] memory summary" } },
      { kind: "system_item", ts: 1, item: { kind: "notification", body: "build finished" } },
      { kind: "user_input", ts: 1, text: "line one\nline two" },
    ] as Entry<Item>[]);
    expect(text).toBe("[Notification] build finished\n[User] line one\n  line two");
  });
});
