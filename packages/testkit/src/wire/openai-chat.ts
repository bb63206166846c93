import type { SseEvent } from "../types.js";
import {
  data,
  type PartsResponse,
  type RenderContext,
  rawData,
  resolveFinishReason,
  resolveUsage,
  splitIntoChunks,
  toolArgumentsJson,
  unsupported,
} from "./render-context.js";

/**
 * Renders a scripted turn as an OpenAI Chat Completions stream: `chat.completion.chunk` deltas, a chunk with
 * the finish reason, a usage-only chunk (what `stream_options.include_usage` yields) and `data: [DONE]`.
 * Reasoning goes out as `delta.reasoning_content`, the field OpenAI-compatible servers use (the official API
 * streams no reasoning, so `@ai-sdk/openai` ignores it); redacted reasoning has no chat form and is dropped.
 */
export function renderOpenAIChat(response: PartsResponse, ctx: RenderContext): SseEvent[] {
  const usage = resolveUsage(response);
  const envelope = {
    id: response.id ?? ctx.nextId("chatcmpl-double"),
    object: "chat.completion.chunk",
    created: Math.floor(ctx.now() / 1000),
    model: ctx.model,
    system_fingerprint: null,
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): SseEvent => ({
    data: data({
      ...envelope,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      usage: null,
    }),
  });
  const events: SseEvent[] = [chunk({ role: "assistant", content: "", refusal: null })];
  let toolIndex = 0;
  const finishReason = resolveFinishReason(response);
  if (finishReason === "pause_turn") unsupported("openai-chat", 'finish reason "pause_turn"');
  for (const [partIndex, part] of response.parts.entries()) {
    const where = `openai-chat script part ${partIndex} (${part.type})`;
    switch (part.type) {
      case "text":
        for (const content of splitIntoChunks(part.text, part.chunkSize, where))
          events.push(chunk({ content }));
        break;
      case "reasoning":
        for (const reasoning_content of splitIntoChunks(part.text, part.chunkSize, where)) {
          events.push(chunk({ reasoning_content }));
        }
        break;
      case "redacted_reasoning":
        break;
      case "tool_call": {
        const index = toolIndex++;
        const id = part.id ?? ctx.nextId("call_double_");
        events.push(
          chunk({
            tool_calls: [{ index, id, type: "function", function: { name: part.name, arguments: "" } }],
          }),
        );
        for (const piece of splitIntoChunks(toolArgumentsJson(part), part.chunkSize, where)) {
          events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
        }
        break;
      }
      case "error":
        // OpenAI-compatible gateways put an error object in an otherwise normal chunk, then end.
        events.push({ data: data({ error: part.error }) });
        events.push({ data: "[DONE]" });
        return events;
      case "raw":
        events.push({ ...(part.event !== undefined ? { event: part.event } : {}), data: rawData(part) });
        break;
      case "server_tool_call":
      case "server_tool_result":
      case "compaction":
        unsupported("openai-chat", part.type, partIndex);
    }
  }
  events.push(chunk({}, finishReason));
  events.push({
    data: data({
      ...envelope,
      choices: [],
      usage: {
        prompt_tokens: usage.inputTokens,
        completion_tokens: usage.outputTokens,
        total_tokens: usage.inputTokens + usage.outputTokens,
        prompt_tokens_details: {
          cached_tokens: usage.cacheReadTokens,
          ...(usage.cacheWriteTokens > 0 ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
        },
        completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
      },
    }),
  });
  events.push({ data: "[DONE]" });
  return events;
}
