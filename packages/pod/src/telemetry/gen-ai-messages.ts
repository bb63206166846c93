import type { Item } from "@podkit/llm-worker";

// The JSON shapes of `gen_ai.input.messages` / `gen_ai.output.messages` (the conventions'
// ChatMessage with typed parts). Built only when the application opted in to contents.

type Part =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; response: unknown }
  | { type: "compaction"; content: string };

interface ChatMessage {
  role: "user" | "assistant" | "system" | "tool";
  parts: Part[];
  finish_reason?: string;
}

function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function messageOf(item: Item): ChatMessage {
  switch (item.type) {
    case "message":
      return { role: item.role, parts: item.content.map((part) => ({ type: "text", content: part.text })) };
    case "reasoning":
      return { role: "assistant", parts: [{ type: "reasoning", content: item.text }] };
    case "compaction":
      return { role: "assistant", parts: [{ type: "compaction", content: item.text }] };
    case "tool_call":
    case "provider_tool_call":
      return {
        role: "assistant",
        parts: [
          {
            type: "tool_call",
            id: item.call_id,
            name: item.name,
            arguments: parsedArguments(item.arguments),
          },
        ],
      };
    case "tool_result":
      return {
        role: "tool",
        parts: [{ type: "tool_call_response", id: item.call_id, response: item.content ?? item.summary }],
      };
    case "provider_tool_result":
      return {
        role: "assistant",
        parts: [{ type: "tool_call_response", id: item.call_id, response: item.result }],
      };
  }
}

/** History items as chat messages, consecutive items of one role joined into one message. */
export function chatMessagesOf(items: readonly Item[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const item of items) {
    const message = messageOf(item);
    const last = messages.at(-1);
    if (last !== undefined && last.role === message.role && message.role !== "user") {
      last.parts.push(...message.parts);
    } else {
      messages.push(message);
    }
  }
  return messages;
}

/** `gen_ai.input.messages` / `gen_ai.output.messages` as the JSON string attribute. */
export function messagesAttribute(items: readonly Item[], finishReason?: string): string {
  const messages = chatMessagesOf(items);
  const last = messages.at(-1);
  if (finishReason !== undefined && last !== undefined) last.finish_reason = finishReason;
  return JSON.stringify(messages);
}

/** One text message as the JSON string attribute (a run's input or final answer). */
export function textMessageAttribute(
  role: "user" | "assistant",
  text: string,
  finishReason?: string,
): string {
  const message: ChatMessage = { role, parts: [{ type: "text", content: text }] };
  if (finishReason !== undefined) message.finish_reason = finishReason;
  return JSON.stringify([message]);
}

/** `gen_ai.system_instructions`. */
export function systemInstructionsAttribute(systemPrompt: string): string {
  return JSON.stringify([{ type: "text", content: systemPrompt }]);
}
