import { ScriptError } from "../errors.js";
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
  unsupported,
} from "./render-context.js";

/**
 * Renders a scripted turn as an OpenAI Responses stream: response.created / in_progress, one output item
 * per part (message, reasoning with summary deltas and `encrypted_content` = the signature, function_call
 * with argument deltas), then response.completed (or response.incomplete for `length`) carrying usage.
 * Events the AI SDK does not model (content_part.*, *.done) are sent anyway because the real API sends them.
 */
export function renderOpenAIResponses(response: PartsResponse, ctx: RenderContext): SseEvent[] {
  const usage = resolveUsage(response);
  const finishReason = resolveFinishReason(response);
  const responseId = response.id ?? ctx.nextId("resp_double_");
  const base = {
    id: responseId,
    object: "response",
    created_at: Math.floor(ctx.now() / 1000),
    model: ctx.model,
  };
  const events: SseEvent[] = [];
  const emit = (payload: { type: string } & Record<string, unknown>) => {
    events.push({ event: payload.type, data: data({ ...payload, sequence_number: events.length }) });
  };
  const inProgress = { ...base, status: "in_progress", output: [], usage: null, incomplete_details: null };
  emit({ type: "response.created", response: inProgress });
  emit({ type: "response.in_progress", response: inProgress });

  if (finishReason === "pause_turn") unsupported("openai-responses", 'finish reason "pause_turn"');
  const output: Record<string, unknown>[] = [];
  // A server tool call and its result are one output item: opened by the call, completed by the result.
  const openServerItems = new Map<string, { item: Record<string, unknown>; output_index: number }>();
  let lastServerCall: string | undefined;
  for (const [output_index, part] of response.parts.entries()) {
    const where = `openai-responses script part ${output_index} (${part.type})`;
    switch (part.type) {
      case "text": {
        const item_id = ctx.nextId("msg_double_");
        const item = { id: item_id, type: "message", role: "assistant" };
        emit({
          type: "response.output_item.added",
          output_index,
          item: { ...item, status: "in_progress", content: [] },
        });
        const location = { item_id, output_index, content_index: 0 };
        emit({ type: "response.content_part.added", ...location, part: emptyOutputText() });
        for (const delta of splitIntoChunks(part.text, part.chunkSize, where)) {
          emit({ type: "response.output_text.delta", ...location, delta, logprobs: [] });
        }
        emit({ type: "response.output_text.done", ...location, text: part.text, logprobs: [] });
        const content = { type: "output_text", text: part.text, annotations: [], logprobs: [] };
        emit({ type: "response.content_part.done", ...location, part: content });
        const done = { ...item, status: "completed", content: [content] };
        emit({ type: "response.output_item.done", output_index, item: done });
        output.push(done);
        break;
      }
      case "reasoning": {
        const item_id = ctx.nextId("rs_double_");
        const encrypted = part.signature !== undefined ? { encrypted_content: part.signature } : {};
        emit({
          type: "response.output_item.added",
          output_index,
          item: { id: item_id, type: "reasoning", summary: [], ...encrypted },
        });
        const location = { item_id, output_index, summary_index: 0 };
        emit({
          type: "response.reasoning_summary_part.added",
          ...location,
          part: { type: "summary_text", text: "" },
        });
        for (const delta of splitIntoChunks(part.text, part.chunkSize, where)) {
          emit({ type: "response.reasoning_summary_text.delta", ...location, delta });
        }
        emit({ type: "response.reasoning_summary_text.done", ...location, text: part.text });
        const summary = { type: "summary_text", text: part.text };
        emit({ type: "response.reasoning_summary_part.done", ...location, part: summary });
        const done = { id: item_id, type: "reasoning", summary: [summary], ...encrypted };
        emit({ type: "response.output_item.done", output_index, item: done });
        output.push(done);
        break;
      }
      case "redacted_reasoning": {
        // The Responses API's opaque reasoning is a reasoning item with only encrypted content.
        const item = {
          id: ctx.nextId("rs_double_"),
          type: "reasoning",
          summary: [],
          encrypted_content: part.data,
        };
        emit({ type: "response.output_item.added", output_index, item });
        emit({ type: "response.output_item.done", output_index, item });
        output.push(item);
        break;
      }
      case "tool_call": {
        const item_id = ctx.nextId("fc_double_");
        const call_id = part.id ?? ctx.nextId("call_double_");
        const args = toolArgumentsJson(part);
        const item = { id: item_id, type: "function_call", call_id, name: part.name };
        emit({
          type: "response.output_item.added",
          output_index,
          item: { ...item, status: "in_progress", arguments: "" },
        });
        for (const delta of splitIntoChunks(args, part.chunkSize, where)) {
          emit({ type: "response.function_call_arguments.delta", item_id, output_index, delta });
        }
        emit({ type: "response.function_call_arguments.done", item_id, output_index, arguments: args });
        const done = { ...item, status: "completed", arguments: args };
        emit({ type: "response.output_item.done", output_index, item: done });
        output.push(done);
        break;
      }
      case "server_tool_call": {
        const isMcp = part.mcpServer !== undefined;
        if (!isMcp && part.name !== "web_search") {
          unsupported(
            "openai-responses",
            `server tool "${part.name}" (only web_search and MCP calls are scripted)`,
            output_index,
          );
        }
        const id = part.id ?? ctx.nextId(isMcp ? "mcp_double_" : "ws_double_");
        lastServerCall = id;
        const item: Record<string, unknown> = isMcp
          ? {
              id,
              type: "mcp_call",
              server_label: part.mcpServer,
              name: part.name,
              arguments: JSON.stringify(part.input),
            }
          : { id, type: "web_search_call" };
        emit({ type: "response.output_item.added", output_index, item: { ...item, status: "in_progress" } });
        if (isMcp) {
          emit({
            type: "response.mcp_call_arguments.done",
            item_id: id,
            output_index,
            arguments: item.arguments,
          });
          emit({ type: "response.mcp_call.in_progress", item_id: id, output_index });
        } else {
          emit({ type: "response.web_search_call.in_progress", item_id: id, output_index });
          emit({ type: "response.web_search_call.searching", item_id: id, output_index });
        }
        openServerItems.set(id, { item, output_index });
        break;
      }
      case "server_tool_result": {
        const id = resultCallId(part, lastServerCall, where);
        const open = openServerItems.get(id);
        if (open === undefined) {
          throw new ScriptError(
            `${where}: no open server_tool_call with id ${JSON.stringify(id)} before this result`,
          );
        }
        openServerItems.delete(id);
        const isMcp = open.item.type === "mcp_call";
        emit({
          type: isMcp
            ? part.isError
              ? "response.mcp_call.failed"
              : "response.mcp_call.completed"
            : "response.web_search_call.completed",
          item_id: id,
          output_index: open.output_index,
        });
        const fields = typeof part.result === "object" && part.result !== null ? part.result : {};
        const done = { ...open.item, status: part.isError ? "failed" : "completed", ...fields };
        emit({ type: "response.output_item.done", output_index: open.output_index, item: done });
        output.push(done);
        break;
      }
      case "error":
        // The Responses API reports a failure mid-stream as an `error` event, then closes the stream.
        emit({ ...part.error, type: "error" });
        return events;
      case "raw":
        events.push({ ...(part.event !== undefined ? { event: part.event } : {}), data: rawData(part) });
        break;
      case "compaction":
        unsupported("openai-responses", part.type, output_index);
    }
  }
  const [unclosed] = openServerItems.keys();
  if (unclosed !== undefined) {
    throw new ScriptError(
      `openai-responses script: server_tool_call ${unclosed} has no server_tool_result; on this wire the call and its result are one output item`,
    );
  }

  const incomplete = finishReason === "length" || finishReason === "content_filter";
  emit({
    type: incomplete ? "response.incomplete" : "response.completed",
    response: {
      ...base,
      status: incomplete ? "incomplete" : "completed",
      incomplete_details: incomplete
        ? { reason: finishReason === "length" ? "max_output_tokens" : "content_filter" }
        : null,
      output,
      usage: {
        input_tokens: usage.inputTokens,
        input_tokens_details: {
          cached_tokens: usage.cacheReadTokens,
          ...(usage.cacheWriteTokens > 0 ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
        },
        output_tokens: usage.outputTokens,
        output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
        total_tokens: usage.inputTokens + usage.outputTokens,
      },
    },
  });
  return events;
}

function emptyOutputText() {
  return { type: "output_text", text: "", annotations: [], logprobs: [] };
}
