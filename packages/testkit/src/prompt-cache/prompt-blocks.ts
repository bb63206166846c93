import type { CapturedRequest, Wire } from "../types.js";
import { canonicalJson } from "./canonical.js";

/** One cacheable unit of a prompt, in the order the provider reads the prompt. */
export interface PromptBlock {
  /** Canonical serialization; prompts are compared and sized on these strings. */
  text: string;
  /** Whether the request put an Anthropic `cache_control` breakpoint on this block. */
  breakpoint: boolean;
}

/** The prompt of one captured request as blocks, plus the scope a cache entry is shared within. */
export interface PromptShape {
  /** Requests only share cache entries within one scope (the model; for OpenAI also `prompt_cache_key`). */
  scope: string;
  blocks: PromptBlock[];
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function block(value: unknown, breakpoint = false): PromptBlock {
  return { text: canonicalJson(value), breakpoint };
}

function hasBreakpoint(value: unknown): boolean {
  return isObject(value) && isObject(value.cache_control);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Splits a request body into prompt blocks in the provider's prefix order. Anthropic: tools, system blocks,
 * then every content block of every message (role kept), each carrying its own breakpoint. OpenAI Chat:
 * tools, then messages. OpenAI Responses: tools, instructions, then input items. Gemini: tools, system
 * instruction, then contents. A request without a JSON body yields no blocks.
 */
export function promptShape(request: CapturedRequest, wire: Wire): PromptShape {
  const body: unknown = request.body;
  if (!isObject(body)) return { scope: "", blocks: [] };
  const tools = list(body.tools).map((tool) => block({ tool }, hasBreakpoint(tool)));
  switch (wire) {
    case "anthropic": {
      const system =
        typeof body.system === "string"
          ? [block({ system: body.system })]
          : list(body.system).map((part) => block({ system: part }, hasBreakpoint(part)));
      const messages = list(body.messages).flatMap((message) => {
        if (!isObject(message)) return [];
        const role = message.role;
        if (typeof message.content === "string") return [block({ role, content: message.content })];
        return list(message.content).map((part) => block({ role, content: part }, hasBreakpoint(part)));
      });
      return { scope: String(body.model), blocks: [...tools, ...system, ...messages] };
    }
    case "openai-chat":
      return {
        scope: `${String(body.model)}\u0000${String(body.prompt_cache_key ?? "")}`,
        blocks: [...tools, ...list(body.messages).map((message) => block(message))],
      };
    case "openai-responses": {
      const instructions =
        body.instructions !== undefined ? [block({ instructions: body.instructions })] : [];
      const input =
        typeof body.input === "string"
          ? [block({ role: "user", content: body.input })]
          : list(body.input).map((item) => block(item));
      return {
        scope: `${String(body.model)}\u0000${String(body.prompt_cache_key ?? "")}`,
        blocks: [...tools, ...instructions, ...input],
      };
    }
    case "google": {
      const model = /\/models\/([^/:]+):/.exec(request.path)?.[1] ?? "";
      const system =
        body.systemInstruction !== undefined ? [block({ systemInstruction: body.systemInstruction })] : [];
      return {
        scope: model,
        blocks: [...tools, ...system, ...list(body.contents).map((content) => block(content))],
      };
    }
  }
}
