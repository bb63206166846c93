import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import type { FeedHub } from "../feed/feed-hub.js";
import type { SessionListFeed } from "../feed/session-list-feed.js";
import type { SessionRuns } from "../runs/session-runs.js";
import type { Requester } from "../security/credentials.js";

/** What the routes share: the store (reads), the runs of this server, the feeds of its streams, who asks. */
export interface RouteContext {
  store: Store<Item>;
  runs: SessionRuns;
  hub: FeedHub;
  /** The live session list, shared by its clients. */
  list: SessionListFeed;
  /** Who sent a request, from its `Authorization` header (the guard let it through). */
  requester: (authorization: string | undefined) => Requester;
  /** Open event streams, and the most there may be at once. */
  streams: { open: number; max: number };
  keepaliveMs: number;
  /** The directory the pods work in (what a rewind restores files in); unknown without one. */
  workspace: string | undefined;
  /** Something a person running the server should know (a session left out of a listing, …). */
  warn: (message: string) => void;
}
