import type { ModelAdapter, ProviderName } from "../adapters/model-adapter.js";
import type { MediaType } from "./media-ref.js";

/**
 * Where a tool result's media go on a wire: `tool_result` — inside the tool result itself (the
 * wire takes images and documents there); `user_message` — the tool result carries a short note
 * and one message after the batch's results carries the media (committed to history, so a replay
 * sends the same request); `none` — the wire takes no media, the model reads a note.
 */
export type MediaPlacement = "tool_result" | "user_message" | "none";

/** What a provider's wire takes of media, and the limits a part and a request must stay within. */
export interface MediaCapabilities {
  readonly placement: MediaPlacement;
  /** The media types it takes where `placement` puts them; others reach the model as a note. */
  readonly mediaTypes: readonly MediaType[];
  /** An image's longest edge in pixels: larger ones are downscaled before they are stored. */
  readonly maxImageEdge: number;
  /** An image's bytes: larger ones are recompressed (or downscaled further) before they are stored. */
  readonly maxImageBytes: number;
  /** A document's bytes: larger ones are refused (a note says so). */
  readonly maxDocumentBytes: number;
  /** Media parts one request may carry: the oldest beyond it are left out of the request (a note). */
  readonly maxPartsPerRequest: number;
  /** Their bytes together (before base64): the oldest beyond it are left out of the request. */
  readonly maxBytesPerRequest: number;
}

const MB = 1024 * 1024;
const IMAGES: readonly MediaType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/**
 * What each provider podkit speaks takes (docs/media.md). Anthropic: images and PDFs inside a
 * `tool_result` block, 5 MB an image, a long edge of 1568 px before it resizes them itself (8000 is
 * its hard limit), 100 images and 32 MB a request. OpenAI Responses: `input_image` / `input_file`
 * in a `function_call_output`, 2048 px (it fits high detail into that), 20 MB an image, 50 MB a
 * request. OpenAI Chat Completions and OpenAI-compatible servers take no media in a tool message
 * (the AI SDK would send them as JSON text: base64 the model cannot see), so theirs go into a
 * message after the results. Gemini: inline parts of the function response (Gemini 3) or beside it
 * (older models), no GIF, 3072 px, 7 MB inline, 20 MB a request. Ollama: PNG and JPEG only. The
 * request budgets leave room for base64 (4/3 of the bytes) and the rest of the request.
 */
export const MEDIA_CAPABILITIES: Readonly<Record<ProviderName, MediaCapabilities>> = {
  anthropic: {
    placement: "tool_result",
    mediaTypes: [...IMAGES, "application/pdf"],
    maxImageEdge: 1568,
    maxImageBytes: 5 * MB,
    maxDocumentBytes: 16 * MB,
    maxPartsPerRequest: 100,
    maxBytesPerRequest: 20 * MB,
  },
  openai: {
    placement: "tool_result",
    mediaTypes: [...IMAGES, "application/pdf"],
    maxImageEdge: 2048,
    maxImageBytes: 20 * MB,
    maxDocumentBytes: 32 * MB,
    maxPartsPerRequest: 500,
    maxBytesPerRequest: 32 * MB,
  },
  "openai-chat": {
    placement: "user_message",
    mediaTypes: [...IMAGES, "application/pdf"],
    maxImageEdge: 2048,
    maxImageBytes: 20 * MB,
    maxDocumentBytes: 32 * MB,
    maxPartsPerRequest: 500,
    maxBytesPerRequest: 32 * MB,
  },
  google: {
    placement: "tool_result",
    mediaTypes: ["image/png", "image/jpeg", "image/webp", "application/pdf"],
    maxImageEdge: 3072,
    maxImageBytes: 7 * MB,
    maxDocumentBytes: 7 * MB,
    maxPartsPerRequest: 1000,
    maxBytesPerRequest: 14 * MB,
  },
  ollama: {
    placement: "user_message",
    mediaTypes: ["image/png", "image/jpeg"],
    maxImageEdge: 1568,
    maxImageBytes: 10 * MB,
    maxDocumentBytes: 0,
    maxPartsPerRequest: 20,
    maxBytesPerRequest: 20 * MB,
  },
  "openai-compatible": {
    placement: "user_message",
    mediaTypes: IMAGES,
    maxImageEdge: 2048,
    maxImageBytes: 10 * MB,
    maxDocumentBytes: 0,
    maxPartsPerRequest: 50,
    maxBytesPerRequest: 20 * MB,
  },
};

/** A wire podkit does not know (a custom model): no media are sent, the model reads notes. */
export const NO_MEDIA: MediaCapabilities = {
  placement: "none",
  mediaTypes: [],
  maxImageEdge: 1568,
  maxImageBytes: 5 * MB,
  maxDocumentBytes: 0,
  maxPartsPerRequest: 0,
  maxBytesPerRequest: 0,
};

/** The AI SDK provider ids of `adapterFromModel` models (`anthropic.messages`, `openai.chat`, …). */
function providerOf(provider: string): ProviderName | undefined {
  if (provider in MEDIA_CAPABILITIES) return provider as ProviderName;
  const [family, api] = provider.split(".");
  if (family === "anthropic") return "anthropic";
  if (family === "openai") return api === "chat" ? "openai-chat" : api === "responses" ? "openai" : undefined;
  if (family === "google") return "google";
  return undefined;
}

/** What the adapter's wire takes of media (`NO_MEDIA` for one podkit does not know). */
export function mediaCapabilities(adapter: Pick<ModelAdapter, "provider">): MediaCapabilities {
  const provider = providerOf(adapter.provider);
  return provider === undefined ? NO_MEDIA : MEDIA_CAPABILITIES[provider];
}
