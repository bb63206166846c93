// biome-ignore-all lint/suspicious/noExplicitAny: captured request bodies are untyped provider JSON
import type { Wire } from "@podkit/testkit";

/** Reads the parts of a captured request body that tests assert on, per wire format. */
export interface WireView {
  systemText(body: any): string;
  toolNames(body: any): string[];
  /** Tool results in request order: call id and the text the model sees. */
  toolResults(body: any): { id: string; text: string }[];
  /** Tool calls echoed back in the request. */
  toolCalls(body: any): { id: string; name: string; args: unknown }[];
  /** Assistant text parts echoed back, in order. */
  assistantTexts(body: any): string[];
}

const anthropic: WireView = {
  systemText: (body) => (body.system ?? []).map((part: any) => part.text).join(""),
  toolNames: (body) => (body.tools ?? []).map((tool: any) => tool.name),
  toolResults: (body) =>
    body.messages
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((p: any) => p.type === "tool_result")
      .map((p: any) => ({
        id: p.tool_use_id,
        text: typeof p.content === "string" ? p.content : p.content.map((c: any) => c.text).join(""),
      })),
  toolCalls: (body) =>
    body.messages
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((p: any) => p.type === "tool_use")
      .map((p: any) => ({ id: p.id, name: p.name, args: p.input })),
  assistantTexts: (body) =>
    body.messages
      .filter((m: any) => m.role === "assistant")
      .flatMap((m: any) => m.content)
      .filter((p: any) => p.type === "text")
      .map((p: any) => p.text),
};

const openaiResponses: WireView = {
  systemText: (body) =>
    body.input
      .filter((i: any) => i.role === "system" || i.role === "developer")
      .slice(0, 1)
      .map((i: any) => i.content)
      .join(""),
  toolNames: (body) => (body.tools ?? []).map((tool: any) => tool.name),
  toolResults: (body) =>
    body.input
      .filter((i: any) => i.type === "function_call_output")
      .map((i: any) => ({ id: i.call_id, text: i.output })),
  toolCalls: (body) =>
    body.input
      .filter((i: any) => i.type === "function_call")
      .map((i: any) => ({ id: i.call_id, name: i.name, args: JSON.parse(i.arguments) })),
  assistantTexts: (body) =>
    body.input
      .filter((i: any) => i.role === "assistant")
      .flatMap((i: any) => i.content)
      .map((c: any) => c.text),
};

const openaiChat: WireView = {
  systemText: (body) => (body.messages[0]?.role === "system" ? body.messages[0].content : ""),
  toolNames: (body) => (body.tools ?? []).map((tool: any) => tool.function.name),
  toolResults: (body) =>
    body.messages
      .filter((m: any) => m.role === "tool")
      .map((m: any) => ({ id: m.tool_call_id, text: m.content })),
  toolCalls: (body) =>
    body.messages
      .filter((m: any) => m.role === "assistant")
      .flatMap((m: any) => m.tool_calls ?? [])
      .map((c: any) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })),
  assistantTexts: (body) =>
    body.messages
      .filter((m: any) => m.role === "assistant" && typeof m.content === "string" && m.content !== "")
      .map((m: any) => m.content),
};

const google: WireView = {
  systemText: (body) => (body.systemInstruction?.parts ?? []).map((p: any) => p.text).join(""),
  toolNames: (body) => (body.tools?.[0]?.functionDeclarations ?? []).map((d: any) => d.name),
  toolResults: (body) =>
    body.contents
      .flatMap((c: any) => c.parts)
      .filter((p: any) => p.functionResponse)
      .map((p: any) => ({ id: p.functionResponse.id, text: p.functionResponse.response.content })),
  toolCalls: (body) =>
    body.contents
      .flatMap((c: any) => c.parts)
      .filter((p: any) => p.functionCall)
      .map((p: any) => ({ id: p.functionCall.id, name: p.functionCall.name, args: p.functionCall.args })),
  assistantTexts: (body) =>
    body.contents
      .filter((c: any) => c.role === "model")
      .flatMap((c: any) => c.parts)
      .filter((p: any) => typeof p.text === "string" && !p.thought)
      .map((p: any) => p.text),
};

export const VIEWS: Record<Wire, WireView> = {
  anthropic,
  "openai-responses": openaiResponses,
  "openai-chat": openaiChat,
  google,
};
