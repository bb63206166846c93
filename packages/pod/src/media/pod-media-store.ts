import {
  type Item,
  MediaNotFoundError,
  type MediaPutContext,
  type MediaRef,
  type MediaStore,
  mediaLabel,
  sniffMedia,
  type ToolMedia,
} from "@podkit/llm-worker";
import type { MediaConfig } from "@podkit/manifest";
import type { BlobStore } from "@podkit/session-store";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { fitImage } from "./fit-image.js";
import { mediaRefsOf } from "./media-refs.js";

/** What the pod's media store works with. */
export interface PodMediaStoreOptions {
  /** The session store's blobs; undefined: the store keeps none, and no media are kept. */
  readonly blobs: BlobStore | undefined;
  readonly config: MediaConfig;
  readonly catalog: PromptCatalog;
  /** The session's completed turns: the budget is per turn. */
  readonly turn: () => number;
  /** The worker's history: what the turn has stored before this process counted (a restore). */
  readonly history: () => readonly Item[];
}

/** Parts and bytes a turn has stored. */
interface Spent {
  turn: number;
  parts: number;
  bytes: number;
}

/**
 * The pod's `MediaStore` (docs/media.md): a tool's image is checked by its own signature, fitted to
 * the provider's limits (`fitImage`), stored as a blob of the session store — which is where the
 * log's digests point, so a restore on any machine that opens the store reads the same bytes — and
 * counted against the turn's `[media]` budget. Whatever is refused is a note from the catalog. The
 * bytes are read back from the blobs for each request (the worker keeps the last request's).
 */
export class PodMediaStore implements MediaStore {
  private spent: Spent | undefined;

  constructor(private readonly options: PodMediaStoreOptions) {}

  async put(media: ToolMedia, context: MediaPutContext): Promise<MediaRef | string> {
    const { catalog, config, blobs } = this.options;
    const sniffed = sniffMedia(media.data);
    const declared = {
      media_type: sniffed?.mediaType ?? media.mediaType,
      bytes: media.data.length,
      ...size(sniffed),
    };
    const file = mediaLabel(declared);
    if (!config.enabled) return catalog.render("media_disabled", { file });
    if (sniffed === undefined) {
      return catalog.render("media_unreadable", {
        file,
        reason: "its bytes are no image or PDF podkit reads",
      });
    }
    if (blobs === undefined) return catalog.render("media_no_store", { file });
    const { capabilities } = context;
    let ref: MediaRef;
    let data: Uint8Array;
    if (sniffed.mediaType === "application/pdf") {
      const max = capabilities.maxDocumentBytes;
      if (max > 0 && media.data.length > max)
        return catalog.render("media_too_large", { file, bytes: media.data.length, max_bytes: max });
      data = media.data;
      ref = { type: "media", media_type: sniffed.mediaType, digest: "", bytes: data.length };
      if (media.name !== undefined) ref.name = media.name;
    } else {
      const fitted = await fitImage(media.data, sniffed, capabilities);
      if ("problem" in fitted) {
        return fitted.problem === "unreadable"
          ? catalog.render("media_unreadable", { file, reason: fitted.reason })
          : catalog.render("media_too_large", {
              file,
              bytes: media.data.length,
              max_bytes: capabilities.maxImageBytes,
            });
      }
      data = fitted.data;
      ref = {
        type: "media",
        media_type: fitted.mediaType,
        digest: "",
        bytes: data.length,
        width: fitted.width,
        height: fitted.height,
        ...(fitted.scaledFrom === undefined ? {} : { scaled_from: { ...fitted.scaledFrom } }),
      };
    }
    const spent = this.spentThisTurn();
    if (
      spent.parts + 1 > config.max_images_per_turn ||
      spent.bytes + data.length > config.max_bytes_per_turn
    ) {
      return catalog.render("media_over_budget", {
        file,
        max_images: config.max_images_per_turn,
        max_bytes: config.max_bytes_per_turn,
      });
    }
    // Put even when the blob is there: a put renews its age, so garbage collection keeps it
    // until the entry naming it is written (docs/rewind.md, "Garbage collection").
    ref.digest = await blobs.put(data);
    spent.parts += 1;
    spent.bytes += data.length;
    return ref;
  }

  get(digest: string): Promise<Uint8Array> {
    const { blobs } = this.options;
    if (blobs === undefined)
      return Promise.reject(new MediaNotFoundError(digest, "a session store without blobs"));
    return blobs.get(digest);
  }

  attachmentText(refs: readonly MediaRef[]): string {
    return this.options.catalog.render("media_attachment", {
      count: refs.length,
      files: refs.map(mediaLabel).join(", "),
    });
  }

  /**
   * What the current turn has stored: counted by this store since the turn began, or — the first
   * time it is asked in a turn, e.g. after a restore in the middle of one — read off the history
   * since the turn's user message.
   */
  private spentThisTurn(): Spent {
    const turn = this.options.turn();
    if (this.spent?.turn === turn) return this.spent;
    const history = this.options.history();
    let start = history.length;
    while (start > 0 && !isUserInput(history[start - 1] as Item)) start--;
    const spent: Spent = { turn, parts: 0, bytes: 0 };
    for (const item of history.slice(start)) {
      if (item.type !== "tool_result") continue;
      for (const ref of mediaRefsOf(item)) {
        spent.parts += 1;
        spent.bytes += ref.bytes;
      }
    }
    this.spent = spent;
    return spent;
  }
}

const isUserInput = (item: Item) => item.type === "message" && item.role === "user";

function size(sniffed: { width?: number; height?: number } | undefined) {
  return sniffed?.width === undefined || sniffed.height === undefined
    ? {}
    : { width: sniffed.width, height: sniffed.height };
}
