import { CancelledError } from "@podkit/llm-worker";
import { describe, expect, it } from "vitest";
import { HooksFrozenError, PromptCancelledError } from "../src/pod/errors.js";
import { caught } from "./helpers.js";
import { kinds, sessionEntries, testTools, text, toolCall, usePodWorlds } from "./pod-harness.js";

const world = usePodWorlds();

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of the Anthropic request body.
const sent = (request: any): string => JSON.stringify(request.body.messages);

/** A world with a `ping` tool whose executions are counted, and a pod on it. */
async function podWithPing() {
  const calls: string[] = [];
  const w = await world({ toolPackages: [testTools({ ping: () => "pong" }, calls)] });
  const pod = await w.pod();
  return { w, pod, calls };
}

describe("hooks: decisions only, frozen after the first run", () => {
  it("onPromptSubmit cancel: no invoke is written and nothing is sent", async () => {
    const { w, pod } = await podWithPing();
    pod.addHooks({
      onPromptSubmit: ({ text }) =>
        text.includes("secret") ? { action: "cancel", reason: "no secrets" } : { action: "continue" },
    });
    const error = await caught(pod.run("the secret is 42"));
    expect(PromptCancelledError.isInstance(error)).toBe(true);
    expect(error.message).toContain("no secrets");
    expect(w.double.requests).toHaveLength(0);
    expect(kinds(await sessionEntries(w.workspace))).toEqual(["segment_start"]);
  });

  it("preRequest cancel before any output: CancelledError, no request sent, the user's message kept", async () => {
    const { w, pod } = await podWithPing();
    pod.addHooks({ preRequest: () => ({ action: "cancel", reason: "budget" }) });
    expect(CancelledError.isInstance(await caught(pod.run("hi")))).toBe(true);
    expect(w.double.requests).toHaveLength(0);
    expect(kinds(await sessionEntries(w.workspace))).toEqual([
      "segment_start",
      "invoke",
      "user_input",
      "run_errored",
    ]);
  });

  it("preRequest cancel after output: the invoke is closed with run_errored", async () => {
    const { w, pod } = await podWithPing();
    pod.addHooks({
      preRequest: ({ requests }) =>
        requests === 1 ? { action: "cancel", reason: "stop" } : { action: "continue" },
    });
    w.double.enqueue(toolCall("ping"));
    expect(CancelledError.isInstance(await caught(pod.run("hi")))).toBe(true);
    expect(w.double.requests).toHaveLength(1);
    expect(kinds(await sessionEntries(w.workspace)).slice(-3)).toEqual([
      "assistant_item",
      "tool_result",
      "run_errored",
    ]);
  });

  it("preRequest yield: the run ends yielded (run_completed yielded), resume() continues", async () => {
    const { w, pod } = await podWithPing();
    let yields = 1;
    pod.addHooks({
      preRequest: ({ requests }) =>
        requests === 1 && yields-- > 0 ? { action: "yield" } : { action: "continue" },
    });
    w.double.enqueue(toolCall("ping"), text("done"));
    expect((await pod.run("hi")).status).toBe("yielded");
    expect(w.double.requests).toHaveLength(1);
    expect((await sessionEntries(w.workspace)).at(-1)).toMatchObject({
      kind: "run_completed",
      result: "yielded",
    });
    expect((await pod.resume()).status).toBe("finished");
    expect(w.double.requests).toHaveLength(2);
  });

  it("preToolCall deny: the tool does not run and the model receives the reason as an error result", async () => {
    const { w, pod, calls } = await podWithPing();
    pod.addHooks({
      preToolCall: (call) =>
        call.name === "ping" ? { action: "deny", reason: "ping is not allowed" } : { action: "continue" },
    });
    w.double.enqueue(toolCall("ping"), text("ok"));
    await pod.run("hi");
    expect(calls).toEqual([]);
    expect(sent(w.double.requests[1])).toContain("ping is not allowed");
    const result = (await sessionEntries(w.workspace)).find((entry) => entry.kind === "tool_result");
    expect(result).toMatchObject({ item: { is_error: true } });
    expect(JSON.stringify(result)).toContain("ping is not allowed");
  });

  it("preToolCall abort: CancelledError, the call stays unanswered, the invoke is closed", async () => {
    const { w, pod, calls } = await podWithPing();
    pod.addHooks({ preToolCall: () => ({ action: "abort", reason: "dangerous" }) });
    w.double.enqueue(toolCall("ping"));
    expect(CancelledError.isInstance(await caught(pod.run("hi")))).toBe(true);
    expect(calls).toEqual([]);
    expect(w.double.requests).toHaveLength(1);
    // The hook's decision is in the log between the call and the run's end (docs/permissions.md).
    const entries = await sessionEntries(w.workspace);
    expect(kinds(entries).slice(-3)).toEqual(["assistant_item", "extension", "run_errored"]);
    expect(entries.at(-2)).toMatchObject({
      domain: "policy.decision",
      payload: { decided_by: "hook", outcome: "stop", reason: "dangerous" },
    });
  });

  it("preToolCall pause: the run pauses before the tool runs; resume() runs it once", async () => {
    const { w, pod, calls } = await podWithPing();
    let pauses = 1;
    pod.addHooks({ preToolCall: () => (pauses-- > 0 ? { action: "pause" } : { action: "continue" }) });
    w.double.enqueue(toolCall("ping"), text("ok"));
    expect((await pod.run("hi")).status).toBe("paused");
    expect(calls).toEqual([]);
    expect((await sessionEntries(w.workspace)).at(-1)).toMatchObject({
      kind: "run_completed",
      result: "paused",
      interrupted: true,
    });
    expect((await pod.resume()).status).toBe("finished");
    expect(calls).toEqual(["ping"]);
    expect(sent(w.double.requests[1])).toContain("pong");
  });

  it("postToolCall rewrite: the model and the log get the rewritten result", async () => {
    const { w, pod, calls } = await podWithPing();
    pod.addHooks({ postToolCall: () => ({ action: "rewrite", result: { summary: "REDACTED" } }) });
    w.double.enqueue(toolCall("ping"), text("ok"));
    await pod.run("hi");
    expect(calls).toEqual(["ping"]);
    expect(sent(w.double.requests[1])).toContain("REDACTED");
    expect(sent(w.double.requests[1])).not.toContain("pong");
    expect((await sessionEntries(w.workspace)).find((e) => e.kind === "tool_result")).toMatchObject({
      item: { summary: "REDACTED" },
    });
  });

  it("postToolCall abort: the result is committed (the tool ran), then the run is cancelled and closed", async () => {
    const { w, pod } = await podWithPing();
    pod.addHooks({ postToolCall: () => ({ action: "abort", reason: "saw enough" }) });
    w.double.enqueue(toolCall("ping"));
    expect(CancelledError.isInstance(await caught(pod.run("hi")))).toBe(true);
    expect(w.double.requests).toHaveLength(1);
    expect(kinds(await sessionEntries(w.workspace)).slice(-2)).toEqual(["tool_result", "run_errored"]);
  });

  it("onTurnEnd finish ends the turn; pause leaves it paused (no turn_end) and interrupted", async () => {
    const { w, pod } = await podWithPing();
    const decisions: ("finish" | "pause")[] = ["pause", "finish"];
    pod.addHooks({ onTurnEnd: () => ({ action: decisions.shift() ?? "finish" }) });
    w.double.enqueue(text("first"));
    expect((await pod.run("a")).status).toBe("paused");
    expect(kinds(await sessionEntries(w.workspace))).not.toContain("turn_end");
    w.double.enqueue(text("second"));
    expect((await pod.run("b")).status).toBe("finished");
    const entries = await sessionEntries(w.workspace);
    expect(entries.filter((e) => e.kind === "turn_end")).toEqual([expect.objectContaining({ turn: 1 })]);
    // The second run followed an interrupted (paused) turn: the note precedes the new input.
    expect(sent(w.double.requests[1])).toContain(
      pod.catalog.render("interrupt_system_note", { trigger: "user" }),
    );
  });

  it("onAbort sees the error; hooks cannot be registered after the first run", async () => {
    const { w, pod } = await podWithPing();
    const seen: unknown[] = [];
    pod.addHooks({
      preRequest: () => ({ action: "cancel", reason: "x" }),
      onAbort: ({ error }) => {
        seen.push(error);
      },
    });
    await caught(pod.run("hi"));
    expect(seen).toHaveLength(1);
    expect(CancelledError.isInstance(seen[0])).toBe(true);
    expect(HooksFrozenError.isInstance(await caught(() => pod.addHooks({})))).toBe(true);
    expect(w.double.requests).toHaveLength(0);
  });

  it("hooks are read-only: mutating what they are given throws and changes neither history nor requests", async () => {
    const { w, pod } = await podWithPing();
    const attempts: string[] = [];
    const tamper = (action: () => void) => {
      try {
        action();
        attempts.push("changed");
      } catch (error) {
        attempts.push(error instanceof TypeError ? "refused" : "other");
      }
    };
    pod.addHooks({
      preRequest: ({ items }) => {
        tamper(() => {
          (items[0] as unknown as { content: [{ text: string }] }).content[0].text = "TAMPERED";
        });
        tamper(() => (items as unknown[]).push({ type: "message" }));
        return { action: "continue" };
      },
      preToolCall: (call) => {
        tamper(() => {
          (call as { arguments: string }).arguments = '{"evil":true}';
        });
        return { action: "continue" };
      },
    });
    w.double.enqueue(toolCall("ping", { n: 1 }), text("ok"));
    await pod.run("original words");
    expect(attempts).toEqual(["refused", "refused", "refused", "refused", "refused"]);
    expect(sent(w.double.requests[1])).toContain("original words");
    expect(sent(w.double.requests[1])).not.toContain("TAMPERED");
    expect(JSON.stringify(pod.history)).not.toContain("evil");
  });

  it("the internal interceptor runs first: a hook's preRequest already sees the committed notification", async () => {
    const { w, pod } = await podWithPing();
    const seen: string[] = [];
    pod.addHooks({
      preRequest: ({ items }) => {
        seen.push(JSON.stringify(items));
        return { action: "continue" };
      },
    });
    pod.notify("build is green");
    w.double.enqueue(text("ok"));
    await pod.run("hi");
    const wrapped = pod.catalog.render("notify_wrapper", { message: "build is green" });
    expect(seen[0]).toContain(JSON.stringify(wrapped).slice(1, -1));
    expect(sent(w.double.requests[0])).toContain(JSON.stringify(wrapped).slice(1, -1));
  });
});
