import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { listSessionRows } from "@podkit/session-store";
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
} from "ai";
import { describe, expect, it } from "vitest";
import { useServeWorlds } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

const world = useServeWorlds();
const READ_SCOPE = '[[scope.allow]]\ntarget = ".."\npermission = "read"';

/** The state `useChat` keeps in React, kept in a plain object: AbstractChat is what useChat drives. */
class PlainChat extends AbstractChat<UIMessage> {
  constructor(api: string) {
    const state: ChatState<UIMessage> = {
      status: "ready" as ChatStatus,
      error: undefined,
      messages: [],
      pushMessage: (message) => {
        state.messages = [...state.messages, message];
      },
      popMessage: () => {
        state.messages = state.messages.slice(0, -1);
      },
      replaceMessage: (index, message) => {
        state.messages = state.messages.map((m, i) => (i === index ? message : m));
      },
      snapshot: (thing) => structuredClone(thing),
    };
    super({ transport: new DefaultChatTransport({ api }), state });
  }
}

describe("POST /chat speaks the AI SDK's UI message stream", () => {
  it("streams a run that the ai package's own reader turns into one assistant message", async () => {
    const w = await world({ manifestExtra: READ_SCOPE });
    await writeFile(join(w.workspace, "README.md"), "hello\n");
    w.double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "Read the readme.", signature: "sig" },
          { type: "tool_call", name: "read_file", arguments: { path: "README.md" } },
        ],
      },
      { parts: [{ type: "text", text: "It says hello.", chunkSize: 3 }] },
    );
    const transport = new DefaultChatTransport<UIMessage>({ api: w.url("/chat") });
    const stream: ReadableStream<UIMessageChunk> = await transport.sendMessages({
      chatId: "chat-1",
      messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "What does the readme say?" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    let message: UIMessage | undefined;
    for await (const state of readUIMessageStream({ stream, terminateOnError: true })) message = state;
    expect(message?.role).toBe("assistant");
    const parts = message?.parts ?? [];
    expect(parts.filter((p) => p.type === "step-start")).toHaveLength(2);
    expect(parts.find((p) => p.type === "reasoning")).toMatchObject({
      text: "Read the readme.",
      state: "done",
    });
    expect(parts.find((p) => p.type === "dynamic-tool")).toMatchObject({
      toolName: "read_file",
      state: "output-available",
      input: { path: "README.md" },
    });
    expect(parts.filter((p) => p.type === "text")).toEqual([
      { type: "text", text: "It says hello.", state: "done" },
    ]);
    const [row] = await listSessionRows(w.store);
    expect(message?.metadata).toEqual({ sessionId: row?.sessionId });
  });

  it("lets a useChat-style client hold a conversation: the second message continues the same session", async () => {
    const w = await world();
    w.double.enqueue(
      { parts: [{ type: "text", text: "first answer" }] },
      { parts: [{ type: "text", text: "second answer" }] },
    );
    const chat = new PlainChat(w.url("/chat"));
    await chat.sendMessage({ text: "first question" });
    expect(chat.error).toBeUndefined();
    await chat.sendMessage({ text: "second question" });
    expect(chat.error).toBeUndefined();
    expect(
      chat.messages.map((m) => [
        m.role,
        m.parts
          .filter((p) => p.type === "text")
          .map((p) => (p as { text: string }).text)
          .join(""),
      ]),
    ).toEqual([
      ["user", "first question"],
      ["assistant", "first answer"],
      ["user", "second question"],
      ["assistant", "second answer"],
    ]);
    const rows = await listSessionRows(w.store);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ turns: 2, firstInput: "first question" });
    // The pod saw the log's conversation, not a history the client sent.
    const second = w.double.requests[1]?.body as { messages: { role: string }[] };
    expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });

  it("stop() while the first answer streams keeps the user's message in the log, as in the CLI and over HTTP", async () => {
    const w = await world();
    w.double.enqueue({
      parts: [{ type: "text", text: "never committed" }],
      fault: { kind: "stall", afterEvents: 1, ms: 60_000 },
    });
    const abort = new AbortController();
    const transport = new DefaultChatTransport<UIMessage>({ api: w.url("/chat") });
    const stream = await transport.sendMessages({
      chatId: "chat-stop",
      messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "keep me" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: abort.signal,
    });
    const reader = stream.getReader();
    void (async () => {
      while (!(await reader.read().catch(() => ({ done: true }))).done);
    })();
    // The answer has begun streaming (the double holds it after its first event). Then `stop()`.
    for (let i = 0; i < 2_000 && w.double.requests.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(w.double.requests).toHaveLength(1);
    abort.abort();
    let rows = await listSessionRows(w.store);
    for (let i = 0; i < 1_500 && rows[0]?.status !== "errored"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      rows = await listSessionRows(w.store);
    }
    expect(rows).toMatchObject([{ firstInput: "keep me", status: "errored", turns: 0 }]);
  });

  it("refuses what it cannot do with a 400 and a message", async () => {
    const w = await world();
    const regenerate = await http(w.url("/chat"), {
      json: {
        id: "c",
        trigger: "regenerate-message",
        messages: [{ id: "1", role: "user", parts: [{ type: "text", text: "x" }] }],
      },
    });
    expect(regenerate.status).toBe(400);
    const forged = await http(w.url("/chat"), {
      json: {
        messages: [
          { id: "a", role: "assistant", parts: [], metadata: { sessionId: "../../etc" } },
          { id: "u", role: "user", parts: [{ type: "text", text: "x" }] },
        ],
      },
    });
    expect(forged.status).toBe(400);
    expect((await http(w.url("/chat"), { json: { messages: [] } })).status).toBe(400);
    expect(w.double.requests).toHaveLength(0);
  });
});
