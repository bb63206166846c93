import { createHash } from "node:crypto";
import { MediaNotFoundError } from "../errors.js";
import type { MediaCapabilities } from "./capabilities.js";
import { type MediaRef, mediaLabel, type ToolMedia } from "./media-ref.js";
import { sniffMedia } from "./sniff-media.js";

/** What a `MediaStore` is told about a part it stores. */
export interface MediaPutContext {
  readonly callId: string;
  readonly toolName: string;
  /** What the worker's provider takes: the limits the stored part must fit. */
  readonly capabilities: MediaCapabilities;
  readonly signal: AbortSignal;
}

/**
 * Where a worker keeps the media its tools return (docs/media.md). Tools produce bytes in memory;
 * before a result is committed the worker hands each part to `put`, which stores it (fitted to the
 * provider's limits) and answers the reference the result carries — or a short text the model
 * reads instead (refused: unreadable, too large, over a budget). Before each request `get` gives the
 * bytes back, so history and the log hold digests only. The pod's store keeps them as blobs of its
 * session store; `MemoryMediaStore` is the default of a worker without one.
 */
export interface MediaStore {
  put(media: ToolMedia, context: MediaPutContext): Promise<MediaRef | string>;
  /** The bytes of a stored part; rejects when there is none (the request then carries a note). */
  get(digest: string): Promise<Uint8Array>;
  /**
   * The text of the message carrying a batch's media on a wire whose tool results take none
   * (`placement: "user_message"`); committed with it. Default `attachmentText` of this module.
   */
  attachmentText?(refs: readonly MediaRef[]): string;
}

/** The default text of the message carrying tool results' media. */
export function defaultAttachmentText(refs: readonly MediaRef[]): string {
  return `[The ${refs.length === 1 ? "file" : `${refs.length} files`} returned by the tool calls above: ${refs.map(mediaLabel).join(", ")}]`;
}

/** `sha256:<64 hex>` of `bytes`, the name a media part is stored under. */
export function mediaDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * A media store in memory, the default of a `Worker` without one: parts are checked by their own
 * signature and kept as they are (nothing is downscaled: a part over the provider's limits is
 * refused with a note), for the worker's lifetime. A host that persists history gives the worker a
 * store that persists the bytes too (the pod keeps them as blobs).
 */
export class MemoryMediaStore implements MediaStore {
  private readonly parts = new Map<string, Uint8Array>();

  async put(media: ToolMedia, context: MediaPutContext): Promise<MediaRef | string> {
    const sniffed = sniffMedia(media.data);
    if (sniffed === undefined)
      return `[${media.mediaType} not shown: its bytes are not an image or PDF podkit reads]`;
    const { capabilities } = context;
    const image = sniffed.mediaType !== "application/pdf";
    const limit = image ? capabilities.maxImageBytes : capabilities.maxDocumentBytes;
    if (media.data.length > limit) {
      return `[${sniffed.mediaType} not shown: ${media.data.length} bytes, more than this provider takes (${limit})]`;
    }
    const longEdge = Math.max(sniffed.width ?? 0, sniffed.height ?? 0);
    if (image && longEdge > capabilities.maxImageEdge) {
      return `[${sniffed.mediaType} not shown: ${sniffed.width}×${sniffed.height} px, larger than this provider takes (${capabilities.maxImageEdge} px); this worker's media store does not downscale]`;
    }
    const digest = mediaDigest(media.data);
    this.parts.set(digest, media.data.slice());
    return {
      type: "media",
      media_type: sniffed.mediaType,
      digest,
      bytes: media.data.length,
      ...(sniffed.width === undefined ? {} : { width: sniffed.width }),
      ...(sniffed.height === undefined ? {} : { height: sniffed.height }),
      ...(media.name === undefined || image ? {} : { name: media.name }),
    };
  }

  async get(digest: string): Promise<Uint8Array> {
    const bytes = this.parts.get(digest);
    if (bytes === undefined) throw new MediaNotFoundError(digest, "this worker's memory");
    return bytes;
  }
}
