import { randomUUID } from "node:crypto";
import { AbortedError, CancelledError } from "@podkit/llm-worker";
import type { Hono } from "hono";
import { z } from "zod";
import { HttpError } from "../http/http-error.js";
import { jsonBody } from "../http/json-body.js";
import { isSessionId } from "../http/session-id.js";
import type { StartedRun } from "../runs/session-runs.js";
import { type UiMessageChunk, UiMessageChunks } from "../ui-stream/ui-message-chunks.js";
import type { RouteContext } from "./context.js";

/** What `useChat` (`DefaultChatTransport`) posts; only what the route reads is checked closely. */
const ChatRequest = z.looseObject({
  id: z.string().optional(),
  trigger: z.string().optional(),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(["user", "assistant", "system"]),
        parts: z.array(z.looseObject({ type: z.string() })),
        metadata: z.unknown().optional(),
      }),
    )
    .min(1, "send at least the user's message"),
});
type ChatMessage = z.infer<typeof ChatRequest>["messages"][number];

/**
 * `POST /chat`: the AI SDK's UI message stream protocol, so `useChat` can use a pod as its
 * backend. The last message (the user's) is the input; the session is the one named in the
 * metadata of the latest assistant message (`{ sessionId }`, sent with every answer's `start`
 * and `finish`), else a new one. The rest of the client's history is ignored: the log is the
 * conversation. Closing the request interrupts the run (the `stop()` of `useChat`).
 */
export function chatRoutes(app: Hono, ctx: RouteContext): void {
  app.post("/chat", async (c) => {
    const body = await jsonBody(c, ChatRequest);
    if (body.trigger !== undefined && body.trigger !== "submit-message") {
      throw new HttpError(
        400,
        `trigger "${body.trigger}" is not supported`,
        "send a new user message (submit-message)",
      );
    }
    const input = userText(body.messages.at(-1) as ChatMessage);
    const sessionId = sessionOf(body.messages);
    const started =
      sessionId === undefined ? await ctx.runs.start(input) : await ctx.runs.continue(sessionId, input);
    return new Response(
      uiMessageStream(started, () => void ctx.runs.interrupt(started.sessionId)),
      {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          "x-vercel-ai-ui-message-stream": "v1",
          "x-accel-buffering": "no",
        },
      },
    );
  });
}

function userText(message: ChatMessage): string {
  if (message.role !== "user") throw new HttpError(400, "the last message must be the user's");
  const text = message.parts
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
  if (text.trim() === "") throw new HttpError(400, "the user's message has no text part");
  return text;
}

/** The session named by the latest assistant message's metadata; a malformed one is a 400. */
function sessionOf(messages: readonly ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as ChatMessage;
    if (message.role !== "assistant") continue;
    const sessionId = (message.metadata as { sessionId?: unknown } | undefined)?.sessionId;
    if (sessionId === undefined) continue;
    if (typeof sessionId !== "string" || !isSessionId(sessionId)) {
      throw new HttpError(400, `invalid sessionId in the metadata of message ${i}`);
    }
    return sessionId;
  }
  return undefined;
}

/** The run's events as UI message chunks, each a `data:` event, ended by `data: [DONE]`. */
function uiMessageStream(started: StartedRun, interrupt: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const chunks = new UiMessageChunks(randomUUID(), started.sessionId);
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (list: UiMessageChunk[]) => {
        if (cancelled || list.length === 0) return;
        controller.enqueue(
          encoder.encode(list.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")),
        );
      };
      send(chunks.start());
      try {
        for await (const event of started.handle) {
          if (cancelled) break;
          send(chunks.of(event));
        }
        const result = await started.handle.result;
        send(chunks.finish({ status: result.status, output: result.output }));
      } catch (error) {
        const interrupted = AbortedError.isInstance(error) || CancelledError.isInstance(error);
        send(chunks.finish(interrupted ? { interrupted } : { error: (error as Error).message }));
      }
      if (cancelled) return;
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
    cancel() {
      cancelled = true;
      interrupt();
    },
  });
}
