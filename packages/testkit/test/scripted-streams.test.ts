import { describe, expect, it } from "vitest";
import type { ScriptedResponse } from "../src/index.js";
import { collect, metadataOf } from "./support/collect.js";
import { useDoubles } from "./support/doubles.js";
import { basicCall, type Client, modelFor, wireOf } from "./support/models.js";

const startDouble = useDoubles();

async function streamScript(client: Client, response: ScriptedResponse) {
  const double = await startDouble({ wire: wireOf(client), responses: [response] });
  const { stream } = await modelFor(client, double.baseUrl).doStream(basicCall());
  const summary = await collect(stream);
  expect(summary.errors).toEqual([]);
  expect(summary.streamError).toBeUndefined();
  expect(double.pending()).toBe(0);
  return summary;
}

const clients: Client[] = ["anthropic", "openai-chat", "openai-compatible", "openai-responses", "google"];

describe.each(clients)("%s client reading the double", (client) => {
  it("receives scripted text split into the scripted deltas", async () => {
    const summary = await streamScript(client, {
      parts: [{ type: "text", text: "The config lives in pod.toml.", chunkSize: 4 }],
    });
    expect(summary.text).toBe("The config lives in pod.toml.");
    expect(summary.textDeltas.filter((delta) => delta.length > 0)).toEqual([
      "The ",
      "conf",
      "ig l",
      "ives",
      " in ",
      "pod.",
      "toml",
      ".",
    ]);
    expect(summary.finish?.finishReason.unified).toBe("stop");
  });

  it("receives parallel tool calls whose arguments arrive across many deltas", async () => {
    const first = { path: "config/pod.toml", encoding: "utf8", lines: [1, 200], follow: true };
    const second = { dir: "src/tools", depth: 2 };
    const summary = await streamScript(client, {
      parts: [
        { type: "tool_call", id: "call_read", name: "read_file", arguments: first, chunkSize: 3 },
        {
          type: "tool_call",
          id: "call_list",
          name: "list_dir",
          arguments: JSON.stringify(second),
          chunkSize: 2,
        },
      ],
    });
    expect(summary.toolCalls).toEqual([
      { toolCallId: "call_read", toolName: "read_file", input: JSON.stringify(first) },
      { toolCallId: "call_list", toolName: "list_dir", input: JSON.stringify(second) },
    ]);
    expect(summary.toolInputDeltas.call_read?.length).toBeGreaterThan(5);
    expect(summary.toolInputDeltas.call_list?.length).toBeGreaterThan(5);
    expect(summary.toolInputDeltas.call_read?.join("")).toBe(JSON.stringify(first));
    expect(summary.toolInputDeltas.call_list?.join("")).toBe(JSON.stringify(second));
    expect(summary.finish?.finishReason.unified).toBe("tool-calls");
  });

  it("reports the scripted length finish reason", async () => {
    const summary = await streamScript(client, {
      parts: [{ type: "text", text: "cut" }],
      finishReason: "length",
    });
    expect(summary.finish?.finishReason.unified).toBe("length");
  });
});

describe("usage as each client reads it", () => {
  const usage = {
    inputTokens: 1200,
    outputTokens: 90,
    cacheReadTokens: 800,
    cacheWriteTokens: 300,
    reasoningTokens: 30,
  };
  const parts: ScriptedResponse = { parts: [{ type: "text", text: "ok" }], usage };

  it.each(["anthropic", "openai-chat", "openai-responses"] as const)(
    "%s reports input total, cache reads, cache writes and reasoning tokens as scripted",
    async (client) => {
      const summary = await streamScript(client, parts);
      expect(summary.finish?.usage.inputTokens).toEqual({
        total: 1200,
        noCache: 100,
        cacheRead: 800,
        cacheWrite: 300,
      });
      expect(summary.finish?.usage.outputTokens).toEqual({ total: 90, text: 60, reasoning: 30 });
    },
  );

  it("google reports cached content tokens and thoughts; Gemini has no cache-write count", async () => {
    const summary = await streamScript("google", parts);
    expect(summary.finish?.usage.inputTokens).toEqual({
      total: 1200,
      noCache: 400,
      cacheRead: 800,
      cacheWrite: undefined,
    });
    expect(summary.finish?.usage.outputTokens).toEqual({ total: 90, text: 60, reasoning: 30 });
  });

  it("openai-compatible reads prompt and cached tokens from the chat usage chunk", async () => {
    const summary = await streamScript("openai-compatible", parts);
    expect(summary.finish?.usage.inputTokens.total).toBe(1200);
    expect(summary.finish?.usage.inputTokens.cacheRead).toBe(800);
    expect(summary.finish?.usage.outputTokens.reasoning).toBe(30);
  });
});

describe("reasoning as each client reads it", () => {
  const reasoning: ScriptedResponse = {
    parts: [
      {
        type: "reasoning",
        text: "The user wants the config; check pod.toml first.",
        signature: "sig-abc",
        chunkSize: 7,
      },
      { type: "text", text: "Reading it now." },
    ],
  };

  it("anthropic streams thinking deltas and the signature_delta signature", async () => {
    const summary = await streamScript("anthropic", reasoning);
    expect(summary.reasoning).toBe("The user wants the config; check pod.toml first.");
    expect(summary.parts.filter((part) => part.type === "reasoning-delta").length).toBeGreaterThan(6);
    expect(metadataOf(summary, "reasoning-delta")).toContainEqual({ anthropic: { signature: "sig-abc" } });
    expect(summary.text).toBe("Reading it now.");
  });

  it("anthropic passes redacted thinking through as redacted data", async () => {
    const summary = await streamScript("anthropic", {
      parts: [
        { type: "redacted_reasoning", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT" },
        { type: "text", text: "done" },
      ],
    });
    expect(metadataOf(summary, "reasoning-start")).toEqual([
      { anthropic: { redactedData: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT" } },
    ]);
    expect(summary.text).toBe("done");
  });

  it("openai-responses streams the reasoning summary and carries the signature as encrypted content", async () => {
    const summary = await streamScript("openai-responses", reasoning);
    expect(summary.reasoning).toBe("The user wants the config; check pod.toml first.");
    const starts = metadataOf(summary, "reasoning-start") as {
      openai: { reasoningEncryptedContent: string };
    }[];
    expect(starts.map((meta) => meta.openai.reasoningEncryptedContent)).toEqual(["sig-abc"]);
    expect(summary.text).toBe("Reading it now.");
  });

  it("openai-responses turns redacted reasoning into a reasoning item with only encrypted content", async () => {
    const summary = await streamScript("openai-responses", {
      parts: [
        { type: "redacted_reasoning", data: "gAAAAopaque" },
        { type: "text", text: "done" },
      ],
    });
    const ends = metadataOf(summary, "reasoning-end") as { openai: { reasoningEncryptedContent: string } }[];
    expect(ends.map((meta) => meta.openai.reasoningEncryptedContent)).toEqual(["gAAAAopaque"]);
    expect(summary.reasoning).toBe("");
  });

  it("google streams thought parts and the thoughtSignature", async () => {
    const summary = await streamScript("google", reasoning);
    expect(summary.reasoning).toBe("The user wants the config; check pod.toml first.");
    expect(metadataOf(summary, "reasoning-delta")).toContainEqual({
      google: { thoughtSignature: "sig-abc" },
    });
    expect(summary.text).toBe("Reading it now.");
  });

  it("google attaches a tool call's thoughtSignature to the call", async () => {
    const summary = await streamScript("google", {
      parts: [{ type: "tool_call", name: "read_file", arguments: { path: "a" }, thoughtSignature: "ts-1" }],
    });
    expect(summary.toolCalls).toHaveLength(1);
    expect(metadataOf(summary, "tool-call")).toEqual([{ google: { thoughtSignature: "ts-1" } }]);
  });

  it("openai-compatible reads reasoning_content deltas from the chat wire", async () => {
    const summary = await streamScript("openai-compatible", reasoning);
    expect(summary.reasoning).toBe("The user wants the config; check pod.toml first.");
    expect(summary.text).toBe("Reading it now.");
  });

  it("the official openai chat client ignores reasoning_content, as it does with compatible servers", async () => {
    const summary = await streamScript("openai-chat", reasoning);
    expect(summary.reasoning).toBe("");
    expect(summary.text).toBe("Reading it now.");
  });
});

describe("gemini streamed function-call arguments", () => {
  it("rebuilds nested objects, arrays, numbers and empty containers from partialArgs pieces", async () => {
    const args = {
      query: { text: "where is the config", limit: 5 },
      tags: ["a", "bb"],
      flags: [],
      exact: false,
    };
    const summary = await streamScript("google", {
      parts: [{ type: "tool_call", id: "call_q", name: "read_file", arguments: args, chunkSize: 4 }],
    });
    expect(summary.toolCalls).toEqual([
      { toolCallId: "call_q", toolName: "read_file", input: JSON.stringify(args) },
    ]);
    expect(summary.toolInputDeltas.call_q?.length).toBeGreaterThan(6);
  });
});

describe("response ids", () => {
  it("echoes a scripted id as the response id and the requested model", async () => {
    const summary = await streamScript("anthropic", {
      id: "msg_fixed",
      parts: [{ type: "text", text: "x" }],
    });
    const metadata = summary.parts.find((part) => part.type === "response-metadata");
    expect(metadata).toMatchObject({ id: "msg_fixed", modelId: "claude-sonnet-4-5" });
  });
});
