import type { CapturedRequest, Wire } from "../types.js";

/** One image or document block of a captured request, with its decoded bytes. */
export interface RequestMediaBlock {
  /** Inside a tool result (`tool_result`, `function_call_output`, `functionResponse`), or in a message. */
  in: "tool_result" | "message";
  /** The role of the message holding it (`user`, `tool`). */
  role: string;
  /** The tool call a tool result answers (Gemini: the function's id, else its name). */
  callId?: string;
  mediaType: string;
  /** The decoded bytes (a Node `Buffer` at run time; typed as `Uint8Array` so consumers need no Node types). */
  data: Uint8Array;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** `data:<type>;base64,<payload>` → type and bytes; anything else (a URL, a file id) is none. */
function dataUrl(value: unknown): { mediaType: string; data: Buffer } | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(value);
  return match === null
    ? undefined
    : { mediaType: match[1] as string, data: Buffer.from(match[2] as string, "base64") };
}

function anthropicBlock(part: unknown): { mediaType: string; data: Buffer } | undefined {
  if (!isObject(part) || (part.type !== "image" && part.type !== "document") || !isObject(part.source))
    return undefined;
  const { source } = part;
  if (source.type !== "base64" || typeof source.data !== "string") return undefined;
  return { mediaType: String(source.media_type), data: Buffer.from(source.data, "base64") };
}

/** OpenAI Responses `input_image` / `input_file`, and Chat Completions `image_url` / `file` parts. */
function openaiBlock(part: unknown): { mediaType: string; data: Buffer } | undefined {
  if (!isObject(part)) return undefined;
  if (part.type === "input_image") return dataUrl(part.image_url);
  if (part.type === "input_file") return dataUrl(part.file_data);
  if (part.type === "image_url" && isObject(part.image_url)) return dataUrl(part.image_url.url);
  if (part.type === "file" && isObject(part.file)) return dataUrl(part.file.file_data);
  return undefined;
}

function geminiBlock(part: unknown): { mediaType: string; data: Buffer } | undefined {
  if (!isObject(part) || !isObject(part.inlineData)) return undefined;
  const { inlineData } = part;
  return typeof inlineData.data === "string"
    ? { mediaType: String(inlineData.mimeType), data: Buffer.from(inlineData.data, "base64") }
    : undefined;
}

/**
 * The image and document blocks of a captured request, in prompt order, with their bytes decoded
 * — where the wire puts media: Anthropic `image`/`document` blocks (in a message or inside a
 * `tool_result`), OpenAI Responses `input_image`/`input_file` (in a message or a
 * `function_call_output`), OpenAI Chat `image_url`/`file` parts of a message, Gemini `inlineData`
 * (in a message, or a function response's: inside its `parts` on Gemini 3, the parts after it in
 * the same content before). Media sent as text (base64 inside a string) are
 * not blocks, and are not listed: that is what a test of an image block catches.
 */
export function requestMedia(request: CapturedRequest, wire: Wire): RequestMediaBlock[] {
  const body: unknown = request.body;
  if (!isObject(body)) return [];
  const found: RequestMediaBlock[] = [];
  const add = (
    block: { mediaType: string; data: Buffer } | undefined,
    where: Omit<RequestMediaBlock, "mediaType" | "data">,
  ) => {
    if (block !== undefined) found.push({ ...where, ...block });
  };
  switch (wire) {
    case "anthropic":
      for (const message of list(body.messages)) {
        if (!isObject(message)) continue;
        const role = String(message.role);
        for (const part of list(message.content)) {
          add(anthropicBlock(part), { in: "message", role });
          if (isObject(part) && part.type === "tool_result") {
            for (const inner of list(part.content))
              add(anthropicBlock(inner), { in: "tool_result", role, callId: String(part.tool_use_id) });
          }
        }
      }
      break;
    case "openai-responses":
      for (const item of list(body.input)) {
        if (!isObject(item)) continue;
        if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
          for (const part of list(item.output))
            add(openaiBlock(part), { in: "tool_result", role: "tool", callId: String(item.call_id) });
        } else {
          for (const part of list(item.content))
            add(openaiBlock(part), { in: "message", role: String(item.role) });
        }
      }
      break;
    case "openai-chat":
      for (const message of list(body.messages)) {
        if (!isObject(message)) continue;
        const role = String(message.role);
        const where =
          role === "tool"
            ? { in: "tool_result" as const, role, callId: String(message.tool_call_id) }
            : { in: "message" as const, role };
        for (const part of list(message.content)) add(openaiBlock(part), where);
      }
      break;
    case "google":
      for (const content of list(body.contents)) {
        if (!isObject(content)) continue;
        const role = String(content.role);
        // Before Gemini 3 a function response's media follow it as parts of the same content.
        let answering: string | undefined;
        for (const part of list(content.parts)) {
          add(
            geminiBlock(part),
            answering === undefined
              ? { in: "message", role }
              : { in: "tool_result", role, callId: answering },
          );
          if (isObject(part) && isObject(part.functionResponse)) {
            const response = part.functionResponse;
            answering = String(response.id ?? response.name);
            for (const inner of list(response.parts))
              add(geminiBlock(inner), { in: "tool_result", role, callId: answering });
          }
        }
      }
      break;
  }
  return found;
}
