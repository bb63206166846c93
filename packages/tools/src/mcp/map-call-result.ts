import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { MEDIA_TYPES, type ToolMedia, type ToolOutput } from "@podkit/llm-worker";

/** Results up to this many bytes of text become the summary itself; longer ones get a one-line summary. */
const INLINE_SUMMARY_BYTES = 300;

/** Bytes a base64 payload decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * A block's payload as a media part the model sees (docs/media.md): an image, or a blob resource
 * holding an image or a PDF. Its bytes go to the worker's media store, never into the text.
 */
function mediaOf(block: ContentBlock): ToolMedia | undefined {
  if (block.type === "image") return { mediaType: block.mimeType, data: Buffer.from(block.data, "base64") };
  if (block.type !== "resource") return undefined;
  const { resource } = block;
  const known = (MEDIA_TYPES as readonly (string | undefined)[]).includes(resource.mimeType);
  if (!("blob" in resource) || typeof resource.blob !== "string" || !known) return undefined;
  const name = resource.uri.slice(resource.uri.lastIndexOf("/") + 1);
  const mediaType = resource.mimeType as string;
  return { mediaType, data: Buffer.from(resource.blob, "base64"), ...(name === "" ? {} : { name }) };
}

/**
 * One content block as the model reads it. An image (and a blob resource holding an image or a
 * PDF) is a one-line marker where it stood, its bytes going out as media; other binary payloads
 * (audio, other blobs) become a short note with their type and size: base64 would only flood the
 * context.
 */
function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${base64Bytes(block.data)} bytes; attached]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${base64Bytes(block.data)} bytes; not shown]`;
    case "resource": {
      const resource = block.resource;
      const type = resource.mimeType ? ` (${resource.mimeType})` : "";
      if ("text" in resource && typeof resource.text === "string") {
        return `[resource ${resource.uri}${type}]\n${resource.text}`;
      }
      const size = "blob" in resource && typeof resource.blob === "string" ? base64Bytes(resource.blob) : 0;
      if (mediaOf(block) !== undefined) return `[resource ${resource.uri}${type}: ${size} bytes; attached]`;
      return `[resource ${resource.uri}${type}: ${size} bytes of binary data; not shown]`;
    }
    case "resource_link": {
      const type = block.mimeType ? ` (${block.mimeType})` : "";
      const about = block.description ? `: ${block.description}` : "";
      return `[resource link "${block.name}" ${block.uri}${type}${about}]`;
    }
    default:
      return `[unsupported MCP content of type "${(block as { type?: unknown }).type}"]`;
  }
}

/**
 * Maps an MCP `tools/call` result to a tool output. `isError` results become error outputs the
 * model reads; a result with no content but `structuredContent` shows that as JSON. Short results
 * are the summary themselves; longer ones keep a one-line summary and put the text in `content`.
 * Images (and image or PDF blob resources) go out as `media`, in block order.
 */
export function mapCallToolResult(toolName: string, result: CallToolResult): ToolOutput {
  const output = mapText(toolName, result);
  if (output.is_error === true) return output;
  const blocks = Array.isArray(result.content) ? result.content : [];
  const media = blocks.flatMap((block) => mediaOf(block) ?? []);
  return media.length === 0 ? output : { ...output, media };
}

function mapText(toolName: string, result: CallToolResult): ToolOutput {
  const blocks = Array.isArray(result.content) ? result.content : [];
  let text = blocks.map(renderBlock).join("\n");
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    text = JSON.stringify(result.structuredContent);
  }
  if (result.isError === true) {
    return {
      summary: `${toolName} failed: ${text === "" ? "(the server gave no message)" : text}`,
      is_error: true,
    };
  }
  if (text === "") return { summary: `${toolName} returned no content` };
  if (Buffer.byteLength(text, "utf8") <= INLINE_SUMMARY_BYTES && !text.includes("\n")) {
    return { summary: text };
  }
  const kinds =
    blocks.length === 0
      ? "structured content"
      : `${blocks.length} content block${blocks.length === 1 ? "" : "s"}`;
  return {
    summary: `${toolName} returned ${kinds} (${Buffer.byteLength(text, "utf8")} bytes)`,
    content: text,
  };
}
