import { z } from "zod";

/**
 * The media types podkit reads from tools and sends to models: the four image formats every
 * provider with image input takes, and PDF documents.
 */
export const MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** True for a media type podkit knows (`MEDIA_TYPES`). */
export function isMediaType(value: unknown): value is MediaType {
  return typeof value === "string" && (MEDIA_TYPES as readonly string[]).includes(value);
}

const dimension = z.number().int().positive();

/**
 * A media part of a tool result (or of the message carrying tool results' media), as history and
 * the session log hold it: the digest of a stored blob (`sha256:<64 hex>`), never the bytes. The
 * host's `MediaStore` turns a tool's bytes into one before the result is committed, and gives the
 * bytes back for each request. `media_type` is any `type/subtype` (a newer podkit may store types
 * this one does not send; those reach the model as a note); `width`/`height` are an image's pixels
 * as stored, `scaled_from` its size before the store downscaled it to the provider's limits.
 */
export const MediaRefSchema = z.object({
  type: z.literal("media"),
  media_type: z.string().regex(/^[a-z]+\/[a-z0-9.+-]+$/),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** Stored bytes. */
  bytes: z.number().int().nonnegative(),
  width: dimension.optional(),
  height: dimension.optional(),
  scaled_from: z.object({ width: dimension, height: dimension }).optional(),
  /** A document's file name, as the tool named it. */
  name: z.string().optional(),
});
export type MediaRef = z.infer<typeof MediaRefSchema>;

/**
 * A media part a tool returns (`ToolOutput.media`): the bytes, in memory. It never reaches the log
 * as it is: the worker hands it to its `MediaStore`, and the result carries the `MediaRef` back.
 */
export interface ToolMedia {
  /** What the tool says it is; the store trusts the bytes' own signature over it. */
  readonly mediaType: string;
  readonly data: Uint8Array;
  /** A file name (a document's), when the tool knows one. */
  readonly name?: string;
}

/** `media` of an item when it is a well-formed list of references; anything else is none. */
export function mediaRefsOf(item: object): MediaRef[] {
  const media = (item as { readonly media?: unknown }).media;
  if (!Array.isArray(media)) return [];
  return media.flatMap((ref) => {
    const parsed = MediaRefSchema.safeParse(ref);
    return parsed.success ? [parsed.data] : [];
  });
}

/** A short label of a part for notes and logs: `image/png 64×64`, `application/pdf 120 KB`. */
export function mediaLabel(ref: Pick<MediaRef, "media_type" | "bytes" | "width" | "height">): string {
  if (ref.width !== undefined && ref.height !== undefined)
    return `${ref.media_type} ${ref.width}×${ref.height}`;
  return `${ref.media_type} ${formatBytes(ref.bytes)}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
