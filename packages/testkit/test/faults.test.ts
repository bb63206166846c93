import { connect } from "node:net";
import { APICallError, type LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import type { Fault, Wire } from "../src/index.js";
import { collect } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { allWires, basicCall, modelFor } from "./support/models.js";

const startDouble = useDoubles();

const text = { type: "text" as const, text: "alpha beta gamma", chunkSize: 6 };
/** Events each wire writes before the second text delta of `text`, so a fault there leaves exactly "alpha ". */
const eventsThroughFirstDelta: Record<Wire, number> = {
  anthropic: 3,
  "openai-chat": 2,
  "openai-responses": 5,
  google: 1,
};

async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  return Promise.resolve(promise).then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

/** The codes along an error's `cause` chain, where undici reports what happened to the socket. */
function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let current = error as { cause?: unknown; code?: unknown } | undefined; current; ) {
    if (typeof current.code === "string") codes.push(current.code);
    current = current.cause as typeof current;
  }
  return codes;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe.each(allWires)("%s faults as the client sees them", (wire) => {
  const streamFault = (fault: Fault) => ({ parts: [text], fault });

  it("an HTTP 429 with Retry-After surfaces as a retryable APICallError carrying the header", async () => {
    const double = await startDouble({
      wire,
      responses: [{ fault: { kind: "status", status: 429, retryAfter: 7 } }],
    });
    const error = await rejection(modelFor(wire, double.baseUrl).doStream(basicCall()));
    expect(APICallError.isInstance(error)).toBe(true);
    const apiError = error as APICallError;
    expect(apiError.statusCode).toBe(429);
    expect(apiError.isRetryable).toBe(true);
    expect(apiError.responseHeaders?.["retry-after"]).toBe("7");
    expect(apiError.message).toBe("provider double: scripted HTTP 429");
    expect(double.requests).toHaveLength(1);
  });

  it("an HTTP 400 is not retryable and its provider-shaped body gives the message", async () => {
    const double = await startDouble({ wire, responses: [{ fault: { kind: "status", status: 400 } }] });
    const error = (await rejection(modelFor(wire, double.baseUrl).doStream(basicCall()))) as APICallError;
    expect(error.statusCode).toBe(400);
    expect(error.isRetryable).toBe(false);
    expect(error.message).toBe("provider double: scripted HTTP 400");
  });

  it("a reset after the first delta tears the stream down after exactly that delta", async () => {
    const double = await startDouble({
      wire,
      responses: [streamFault({ kind: "reset", afterEvents: eventsThroughFirstDelta[wire] })],
    });
    const { stream } = await modelFor(wire, double.baseUrl).doStream(basicCall());
    const summary = await collect(stream);
    expect(summary.text).toBe("alpha ");
    expect(summary.finish).toBeUndefined();
    expect(APICallError.isInstance(summary.streamError)).toBe(true);
    expect(causeCodes(summary.streamError)).toContain("UND_ERR_SOCKET");
  });

  it("a reset before any event makes doStream() fail", async () => {
    const double = await startDouble({ wire, responses: [streamFault({ kind: "reset", afterEvents: 0 })] });
    const failure = await modelFor(wire, double.baseUrl)
      .doStream(basicCall())
      .then(
        async ({ stream }) => {
          const summary = await collect(stream);
          return summary.streamError ?? summary.errors[0];
        },
        (error: unknown) => error,
      );
    expect(APICallError.isInstance(failure)).toBe(true);
    expect(causeCodes(failure)).toContain("UND_ERR_SOCKET");
  });

  it("a stall before the first event holds the call until the client's timeout aborts it", async () => {
    const double = await startDouble({
      wire,
      responses: [streamFault({ kind: "stall", afterEvents: 0, ms: 600_000 })],
    });
    // The client gives up only after the double has the request and has held it (a fixed timeout
    // could fire before a loaded machine even delivered the request).
    const client = new AbortController();
    const call = rejection(
      modelFor(wire, double.baseUrl).doStream(basicCall({ abortSignal: client.signal })),
    );
    while (double.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.abort(new DOMException("the client timed out", "TimeoutError"));
    const error = await call;
    expect((error as Error).name).toMatch(/AbortError|TimeoutError/);
    expect(double.requests).toHaveLength(1);
  });

  it("a stall mid-stream delivers the events before it and nothing after until the client aborts", async () => {
    const double = await startDouble({
      wire,
      responses: [streamFault({ kind: "stall", afterEvents: eventsThroughFirstDelta[wire], ms: 600_000 })],
    });
    // The client gives up 300 ms after the first delta, time enough for the rest to have come had
    // it been sent (a fixed timeout from the start could fire before a loaded machine delivered
    // even the first delta).
    const client = new AbortController();
    const { stream } = await modelFor(wire, double.baseUrl).doStream(
      basicCall({ abortSignal: client.signal }),
    );
    const abortAfterFirstDelta = new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
      transform(part, controller) {
        if (part.type === "text-delta" && !client.signal.aborted) {
          setTimeout(() => client.abort(new DOMException("the client timed out", "TimeoutError")), 300);
        }
        controller.enqueue(part);
      },
    });
    const summary = await collect(stream.pipeThrough(abortAfterFirstDelta));
    expect(summary.text).toBe("alpha ");
    expect(summary.finish?.finishReason.unified ?? "none").not.toBe("stop");
    expect(String((summary.streamError ?? summary.errors[0]) as Error)).toMatch(/abort|timeout/i);
  });

  it("a short stall only delays the stream, which then completes", async () => {
    const double = await startDouble({
      wire,
      responses: [streamFault({ kind: "stall", afterEvents: eventsThroughFirstDelta[wire], ms: 30 })],
    });
    const { stream } = await modelFor(wire, double.baseUrl).doStream(basicCall());
    const summary = await collect(stream);
    expect(summary.text).toBe("alpha beta gamma");
    expect(summary.finish?.finishReason.unified).toBe("stop");
  });

  it("a malformed frame after the first delta shows up as a parse error part", async () => {
    const double = await startDouble({
      wire,
      responses: [streamFault({ kind: "malformed", afterEvents: eventsThroughFirstDelta[wire] })],
    });
    const { stream } = await modelFor(wire, double.baseUrl).doStream(basicCall());
    const summary = await collect(stream);
    expect(summary.text).toBe("alpha ");
    expect(summary.streamError).toBeUndefined();
    expect(summary.errors).toHaveLength(1);
    expect((summary.errors[0] as Error).name).toBe("AI_JSONParseError");
  });
});

describe("status faults with provider-specific details", () => {
  it("an Anthropic 529 overloaded error with an HTTP-date Retry-After is retryable", async () => {
    const retryAfter = "Wed, 21 Oct 2026 07:28:00 GMT";
    const double = await startDouble({
      wire: "anthropic",
      responses: [{ fault: { kind: "status", status: 529, retryAfter } }],
    });
    const error = (await rejection(
      modelFor("anthropic", double.baseUrl).doStream(basicCall()),
    )) as APICallError;
    expect(error.statusCode).toBe(529);
    expect(error.isRetryable).toBe(true);
    expect(error.responseHeaders?.["retry-after"]).toBe(retryAfter);
    expect(JSON.parse(error.responseBody ?? "")).toMatchObject({
      type: "error",
      error: { type: "overloaded_error" },
    });
  });

  it("a scripted error body is sent verbatim and its message reaches the client", async () => {
    const body = JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" },
    });
    const double = await startDouble({
      wire: "anthropic",
      responses: [{ fault: { kind: "status", status: 400, body } }],
    });
    const error = (await rejection(
      modelFor("anthropic", double.baseUrl).doStream(basicCall()),
    )) as APICallError;
    expect(error.message).toBe("prompt is too long: 210000 tokens > 200000 maximum");
    expect(error.responseBody).toBe(body);
  });

  it("a Gemini 503 carries the UNAVAILABLE status in its body", async () => {
    const double = await startDouble({
      wire: "google",
      responses: [{ fault: { kind: "status", status: 503, retryAfter: "30" } }],
    });
    const error = (await rejection(modelFor("google", double.baseUrl).doStream(basicCall()))) as APICallError;
    expect(error.isRetryable).toBe(true);
    expect(JSON.parse(error.responseBody ?? "")).toEqual({
      error: { code: 503, message: "provider double: scripted HTTP 503", status: "UNAVAILABLE" },
    });
  });

  it("a fault on a scripted turn applies to that turn only; the next request streams normally", async () => {
    const double = await startDouble({
      wire: "openai-responses",
      responses: [{ fault: { kind: "status", status: 500 } }, { parts: [text] }],
    });
    const model = modelFor("openai-responses", double.baseUrl);
    expect(((await rejection(model.doStream(basicCall()))) as APICallError).statusCode).toBe(500);
    const summary = await collect((await model.doStream(basicCall())).stream);
    expect(summary.text).toBe("alpha beta gamma");
    expect(double.requests).toHaveLength(2);
  });
});

describe("shutting the double down", () => {
  it("close() returns while a request is stalled, and the stalled client sees its connection end", async () => {
    const double = await startDouble({
      wire: "anthropic",
      responses: [{ parts: [text], fault: { kind: "stall", afterEvents: 0, ms: 600_000 } }],
    });
    const call = modelFor("anthropic", double.baseUrl).doStream(basicCall());
    const outcome = call.then(
      () => "resolved",
      (error: unknown) => error,
    );
    await until(() => double.requests.length === 1);
    await double.close();
    expect(APICallError.isInstance(await outcome)).toBe(true);
  });

  it("close() returns with idle keep-alive connections open and the port stops accepting", async () => {
    const double = await startDouble({
      wire: "openai-chat",
      responses: [{ parts: [text] }, { parts: [text] }],
    });
    const model = modelFor("openai-chat", double.baseUrl);
    for (let i = 0; i < 2; i++) await collect((await model.doStream(basicCall())).stream);
    expect(double.requests[1]?.headers.connection ?? "keep-alive").toBe("keep-alive");
    await double.close();
    const port = Number(new URL(double.origin).port);
    const refused = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("error", resolve);
      socket.once("connect", () => {
        socket.destroy();
        resolve(Object.assign(new Error("connected"), { code: "CONNECTED" }));
      });
    });
    expect(refused.code).toBe("ECONNREFUSED");
  });

  it("close() can be called twice", async () => {
    const double = await startDouble({ wire: "google" });
    await double.close();
    await double.close();
  });
});
