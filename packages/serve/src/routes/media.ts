import { type Item, MEDIA_TYPES, sniffMedia } from "@podkit/llm-worker";
import { type Entry, isBlobDigest, type Store } from "@podkit/session-store";
import type { Hono } from "hono";
import { HttpError } from "../http/http-error.js";
import { checkedSessionId } from "../http/session-id.js";
import type { RouteContext } from "./context.js";

/** Sessions whose media digests are kept between requests (a page shows many images of one session). */
const CACHED_SESSIONS = 32;

/** What a segment's committed entries name as media, as far as they were read. */
interface SegmentMedia {
  count: number;
  digests: Set<string>;
}

/** The digests `media` lists (untrusted: anything that is not a well-formed reference is skipped). */
function addMedia(media: unknown, into: Set<string>): void {
  if (!Array.isArray(media)) return;
  for (const ref of media) {
    const digest = (ref as { digest?: unknown } | null)?.digest;
    if (isBlobDigest(digest)) into.add(digest);
  }
}

/** Media an entry names: a tool result's, an attachment's, and those of a segment's starting history. */
function addEntryMedia(entry: Entry<Item>, into: Set<string>): void {
  switch (entry.kind) {
    case "tool_result":
      addMedia((entry.item as { media?: unknown }).media, into);
      break;
    case "system_item":
      addMedia(entry.item.media, into);
      break;
    case "segment_start":
      for (const item of entry.history) addMedia((item as { media?: unknown }).media, into);
      break;
  }
}

/**
 * The media digests of each session's log, read incrementally: a segment is read from where the
 * last request left it (a segment only grows; one that shrank — a rollback — is read again).
 */
class SessionMedia {
  private readonly sessions = new Map<string, Map<string, SegmentMedia>>();

  constructor(private readonly store: Store<Item>) {}

  /** True when a committed entry of the session names `digest` as media. */
  async names(sessionId: string, digest: string): Promise<boolean> {
    const known = this.sessions.get(sessionId) ?? new Map<string, SegmentMedia>();
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, known);
    if (this.sessions.size > CACHED_SESSIONS)
      this.sessions.delete(this.sessions.keys().next().value as string);
    let found = false;
    for (const segmentId of await this.store.listSegments(sessionId)) {
      const ref = { sessionId, segmentId };
      let segment = known.get(segmentId);
      const count = await this.store.entryCount(ref);
      if (segment === undefined || segment.count > count) segment = { count: 0, digests: new Set() };
      if (segment.count < count) {
        for await (const batch of this.store.readFrom(ref, segment.count)) {
          for (const entry of batch) addEntryMedia(entry, segment.digests);
          segment.count += batch.length;
        }
      }
      known.set(segmentId, segment);
      found ||= segment.digests.has(digest);
    }
    return found;
  }
}

/** The types the route serves: images and PDFs, never anything a browser would run. */
const SERVED: ReadonlySet<string> = new Set(MEDIA_TYPES);

/**
 * `GET /sessions/:id/media/:digest`: an image or PDF a session's tool results carry (docs/media.md),
 * for the viewer. The digest must be well formed (400) and named as media by a committed entry of
 * that session's log (404 otherwise: a blob of another session, a file-change content, a guess);
 * the bytes come from the store's blobs, verified against the digest, and go out with the type
 * their own signature says (never the log's claim), `nosniff` and a sandboxing CSP, so nothing
 * served here runs as a page.
 */
export function mediaRoutes(app: Hono, ctx: RouteContext): void {
  const media = new SessionMedia(ctx.store);
  app.get("/sessions/:id/media/:digest", async (c) => {
    const sessionId = checkedSessionId(c.req.param("id"));
    const digest: string = c.req.param("digest");
    if (!isBlobDigest(digest)) {
      throw new HttpError(
        400,
        `invalid media digest ${JSON.stringify(String(digest).slice(0, 80))}`,
        'a digest is "sha256:" and 64 lowercase hex digits, as the session log names it',
      );
    }
    if (!(await media.names(sessionId, digest))) {
      throw new HttpError(
        404,
        `session ${sessionId} names no media ${digest}`,
        "GET /sessions/<id> shows its log",
      );
    }
    const blobs = ctx.store.blobs;
    if (blobs === undefined) throw new HttpError(404, "this server's session store keeps no blobs");
    const bytes = await blobs.get(digest);
    const type = sniffMedia(bytes)?.mediaType;
    if (type === undefined || !SERVED.has(type)) {
      throw new HttpError(415, `the blob ${digest} is no image or PDF this server shows`);
    }
    return c.body(new Uint8Array(bytes), 200, {
      "content-type": type,
      "content-length": String(bytes.length),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "content-disposition": "inline",
      // The same digest is the same bytes for ever; private: the session may be behind a token.
      "cache-control": "private, max-age=31536000, immutable",
    });
  });
}
