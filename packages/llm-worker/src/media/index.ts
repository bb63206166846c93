export {
  MEDIA_CAPABILITIES,
  type MediaCapabilities,
  type MediaPlacement,
  mediaCapabilities,
} from "./capabilities.js";
export {
  MEDIA_TYPES,
  type MediaRef,
  MediaRefSchema,
  type MediaType,
  mediaLabel,
  type ToolMedia,
} from "./media-ref.js";
export { type MediaPutContext, type MediaStore, MemoryMediaStore } from "./media-store.js";
export { type SniffedMedia, sniffMedia } from "./sniff-media.js";
