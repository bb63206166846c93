import type { MediaCapabilities, MediaType, SniffedMedia } from "@podkit/llm-worker";

/** An image as it is stored: within the provider's limits, in a type it takes. */
export interface FittedImage {
  readonly data: Uint8Array;
  readonly mediaType: MediaType;
  readonly width: number;
  readonly height: number;
  /** The tool's size when it was downscaled. */
  readonly scaledFrom?: { readonly width: number; readonly height: number };
}

/** Why an image could not be fitted: it does not decode, or nothing gets it under the byte limit. */
export type FitProblem =
  | { readonly problem: "unreadable"; readonly reason: string }
  | { readonly problem: "too_large" };

/** Qualities tried, in order, when a lossless or first encoding is still over the byte limit. */
const JPEG_QUALITIES = [85, 70, 55, 40];
/** Each further round shrinks the edge by this factor, down to this many pixels. */
const SHRINK = 0.75;
const MIN_EDGE = 64;

type Sharp = typeof import("sharp")["default"];
let loading: Promise<Sharp> | undefined;

/** sharp, loaded on first use: a pod that never sees an image never loads libvips. */
function loadSharp(): Promise<Sharp> {
  loading ??= import("sharp").then((module) => module.default);
  return loading;
}

/**
 * Fits an image to what the provider takes (docs/media.md, "Fitting"): the longest edge at most
 * `maxImageEdge` (downscaled, aspect kept), the bytes at most `maxImageBytes` (re-encoded, then as
 * JPEG at falling quality, then smaller), and a type it takes (a GIF for Gemini becomes a PNG). An
 * image already within every limit is kept byte for byte, so the same file is always the same blob.
 * Decoding is libvips' (sharp), off the event loop, with its pixel limit against decompression bombs;
 * an animated image keeps its first frame.
 */
export async function fitImage(
  bytes: Uint8Array,
  sniffed: SniffedMedia,
  capabilities: MediaCapabilities,
): Promise<FittedImage | FitProblem> {
  const sharp = await loadSharp();
  let width: number;
  let height: number;
  try {
    const metadata = await sharp(bytes).metadata();
    width = metadata.autoOrient?.width ?? metadata.width ?? 0;
    height = metadata.autoOrient?.height ?? metadata.height ?? 0;
  } catch (error) {
    return { problem: "unreadable", reason: `the image does not decode (${(error as Error).message})` };
  }
  if (width <= 0 || height <= 0) return { problem: "unreadable", reason: "the image has no size" };
  const accepted = (capabilities.mediaTypes as readonly string[]).includes(sniffed.mediaType);
  const fits =
    Math.max(width, height) <= capabilities.maxImageEdge && bytes.length <= capabilities.maxImageBytes;
  if (accepted && fits) return { data: bytes, mediaType: sniffed.mediaType, width, height };

  const target: MediaType = accepted ? sniffed.mediaType : "image/png";
  let edge = Math.min(Math.max(width, height), capabilities.maxImageEdge);
  try {
    for (;;) {
      const scale = edge / Math.max(width, height);
      const size = {
        width: Math.max(1, Math.round(width * scale)),
        height: Math.max(1, Math.round(height * scale)),
      };
      const candidates: { mediaType: MediaType; quality?: number }[] = [
        { mediaType: target },
        ...JPEG_QUALITIES.map((quality) => ({ mediaType: "image/jpeg" as const, quality })),
      ];
      for (const candidate of candidates) {
        if (!(capabilities.mediaTypes as readonly string[]).includes(candidate.mediaType)) continue;
        const data = await encode(sharp, bytes, size, candidate.mediaType, candidate.quality);
        if (data.length <= capabilities.maxImageBytes) {
          const scaled = size.width !== width || size.height !== height;
          return {
            data,
            mediaType: candidate.mediaType,
            ...size,
            ...(scaled ? { scaledFrom: { width, height } } : {}),
          };
        }
      }
      if (edge <= MIN_EDGE) return { problem: "too_large" };
      edge = Math.max(MIN_EDGE, Math.floor(edge * SHRINK));
    }
  } catch (error) {
    return { problem: "unreadable", reason: `the image does not decode (${(error as Error).message})` };
  }
}

async function encode(
  sharp: Sharp,
  bytes: Uint8Array,
  size: { width: number; height: number },
  mediaType: MediaType,
  quality: number | undefined,
): Promise<Uint8Array> {
  // `rotate()` applies the EXIF orientation, which a re-encoded image would otherwise lose.
  const image = sharp(bytes).rotate().resize({ width: size.width, height: size.height, fit: "fill" });
  switch (mediaType) {
    case "image/jpeg":
      return image
        .flatten({ background: "#ffffff" })
        .jpeg({ quality: quality ?? 85, mozjpeg: true })
        .toBuffer();
    case "image/webp":
      return image.webp({ quality: quality ?? 85 }).toBuffer();
    case "image/gif":
      return image.gif().toBuffer();
    default:
      return image.png({ compressionLevel: 9 }).toBuffer();
  }
}
