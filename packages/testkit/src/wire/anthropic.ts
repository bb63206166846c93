import type { SseEvent } from "../types.js";
import {
  data,
  type PartsResponse,
  type RenderContext,
  rawData,
  resolveFinishReason,
  resolveUsage,
  resultCallId,
  splitIntoChunks,
  toolArgumentsJson,
} from "./render-context.js";

const stopReasons = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
  pause_turn: "pause_turn",
} as const;

function event(payload: { type: string } & Record<string, unknown>): SseEvent {
  return { event: payload.type, data: data(payload) };
}

/**
 * Renders a scripted turn as an Anthropic Messages stream: message_start (with the prompt usage, cache
 * read/write split out), one content block per part, message_delta (stop reason, output usage), message_stop.
 * Anthropic's `input_tokens` excludes cached tokens, so the scripted total is split here.
 */
export function renderAnthropic(response: PartsResponse, ctx: RenderContext): SseEvent[] {
  const usage = resolveUsage(response);
  const promptUsage = {
    input_tokens: usage.uncachedInputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
  };
  const events: SseEvent[] = [
    event({
      type: "message_start",
      message: {
        id: response.id ?? ctx.nextId("msg_double_"),
        type: "message",
        role: "assistant",
        model: ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...promptUsage, output_tokens: 1 },
      },
    }),
  ];
  let lastServerCall: string | undefined;
  for (const [index, part] of response.parts.entries()) {
    const where = `anthropic script part ${index} (${part.type})`;
    switch (part.type) {
      case "text":
        events.push(event({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
        for (const text of splitIntoChunks(part.text, part.chunkSize, where)) {
          events.push(event({ type: "content_block_delta", index, delta: { type: "text_delta", text } }));
        }
        break;
      case "reasoning":
        events.push(
          event({
            type: "content_block_start",
            index,
            content_block: { type: "thinking", thinking: "", signature: "" },
          }),
        );
        for (const thinking of splitIntoChunks(part.text, part.chunkSize, where)) {
          events.push(
            event({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } }),
          );
        }
        if (part.signature !== undefined) {
          events.push(
            event({
              type: "content_block_delta",
              index,
              delta: { type: "signature_delta", signature: part.signature },
            }),
          );
        }
        break;
      case "redacted_reasoning":
        events.push(
          event({
            type: "content_block_start",
            index,
            content_block: { type: "redacted_thinking", data: part.data },
          }),
        );
        break;
      case "tool_call":
        events.push(
          event({
            type: "content_block_start",
            index,
            content_block: {
              type: "tool_use",
              id: part.id ?? ctx.nextId("toolu_double_"),
              name: part.name,
              input: {},
            },
          }),
        );
        // The real API opens every tool input with an empty delta before the JSON pieces.
        events.push(
          event({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: "" },
          }),
        );
        for (const partial_json of splitIntoChunks(toolArgumentsJson(part), part.chunkSize, where)) {
          events.push(
            event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }),
          );
        }
        break;
      case "server_tool_call": {
        const id = part.id ?? ctx.nextId(part.mcpServer ? "mcptoolu_double_" : "srvtoolu_double_");
        lastServerCall = id;
        if (part.mcpServer !== undefined) {
          // The MCP connector's block arrives whole: its input is in the start event.
          const block = {
            type: "mcp_tool_use",
            id,
            name: part.name,
            server_name: part.mcpServer,
            input: part.input,
          };
          events.push(event({ type: "content_block_start", index, content_block: block }));
          break;
        }
        events.push(
          event({
            type: "content_block_start",
            index,
            content_block: { type: "server_tool_use", id, name: part.name, input: {} },
          }),
        );
        for (const partial_json of splitIntoChunks(JSON.stringify(part.input), part.chunkSize, where)) {
          events.push(
            event({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }),
          );
        }
        break;
      }
      case "server_tool_result": {
        const tool_use_id = resultCallId(part, lastServerCall, where);
        const block =
          part.mcpServer !== undefined
            ? { type: "mcp_tool_result", tool_use_id, is_error: part.isError ?? false, content: part.result }
            : { type: `${part.name}_tool_result`, tool_use_id, content: part.result };
        events.push(event({ type: "content_block_start", index, content_block: block }));
        break;
      }
      case "compaction":
        events.push(
          event({ type: "content_block_start", index, content_block: { type: "compaction", content: "" } }),
        );
        for (const content of splitIntoChunks(part.text, part.chunkSize, where)) {
          events.push(
            event({ type: "content_block_delta", index, delta: { type: "compaction_delta", content } }),
          );
        }
        break;
      case "error":
        // An overloaded or failing API sends an error event mid-stream and closes it.
        events.push(event({ type: "error", error: part.error }));
        return events;
      case "raw":
        events.push({ ...(part.event !== undefined ? { event: part.event } : {}), data: rawData(part) });
        continue;
    }
    events.push(event({ type: "content_block_stop", index }));
  }
  events.push(
    event({
      type: "message_delta",
      delta: {
        stop_reason: stopReasons[resolveFinishReason(response)],
        stop_sequence: null,
        ...(response.container
          ? { container: { id: response.container.id, expires_at: response.container.expiresAt } }
          : {}),
      },
      usage: {
        ...promptUsage,
        output_tokens: usage.outputTokens,
        ...(usage.reasoningTokens > 0
          ? { output_tokens_details: { thinking_tokens: usage.reasoningTokens } }
          : {}),
      },
    }),
  );
  events.push(event({ type: "message_stop" }));
  return events;
}
