import type { Item } from "@podkit/llm-worker";
import type { Store } from "@podkit/session-store";
import type { FeedHub } from "../feed/feed-hub.js";
import type { SessionRuns } from "../runs/session-runs.js";

/** What the routes share: the store (reads), the runs of this server, the feeds of its streams. */
export interface RouteContext {
  store: Store<Item>;
  runs: SessionRuns;
  hub: FeedHub;
  /** Open event streams, and the most there may be at once. */
  streams: { open: number; max: number };
  keepaliveMs: number;
  /** Something a person running the server should know (a session left out of a listing, …). */
  warn: (message: string) => void;
}
