import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { Wire } from "../../src/index.js";

/** The four wires plus the OpenAI-compatible client, which reads the chat wire's reasoning deltas. */
export type Client = Wire | "openai-compatible";

export const allWires: Wire[] = ["anthropic", "openai-chat", "openai-responses", "google"];

/** The wire a client talks. */
export function wireOf(client: Client): Wire {
  return client === "openai-compatible" ? "openai-chat" : client;
}

/** The real AI SDK model for a client, pointed at the double. */
export function modelFor(client: Client, baseURL: string): LanguageModelV3 {
  switch (client) {
    case "anthropic":
      return createAnthropic({ baseURL, apiKey: "test-anthropic-key" })("claude-sonnet-4-5");
    case "openai-chat":
      return createOpenAI({ baseURL, apiKey: "test-openai-key" }).chat("gpt-5-mini");
    case "openai-responses":
      return createOpenAI({ baseURL, apiKey: "test-openai-key" }).responses("gpt-5-mini");
    case "google":
      return createGoogleGenerativeAI({ baseURL, apiKey: "test-google-key" })("gemini-2.5-flash");
    case "openai-compatible":
      return createOpenAICompatible({ baseURL, apiKey: "test-compat-key", name: "compat" }).chatModel(
        "deepseek-r1",
      );
  }
}

/** A one-message prompt with two declared function tools, enough for every provider to accept the call. */
export function basicCall(overrides: Partial<LanguageModelV3CallOptions> = {}): LanguageModelV3CallOptions {
  return {
    prompt: [{ role: "user", content: [{ type: "text", text: "Read the config files." }] }],
    tools: [
      {
        type: "function",
        name: "read_file",
        inputSchema: { type: "object", properties: { path: { type: "string" } } },
      },
      {
        type: "function",
        name: "list_dir",
        inputSchema: { type: "object", properties: { dir: { type: "string" } } },
      },
    ],
    ...overrides,
  };
}
