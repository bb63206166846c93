import type { Item } from "@podkit/llm-worker";
import type { Pod } from "@podkit/pod";
import type { Store } from "@podkit/session-store";

/**
 * Where the server gets its pods: the application (or `podkit serve`) builds them from its
 * manifest, with the hooks, tools and memory it wants. The server passes the store the pod must
 * write to (its own, so it sees every commit at once); it closes the pods it got.
 */
export interface PodSource {
  /** A new pod; its session is created by its first run. */
  create(store: Store<Item>): Promise<Pod>;
  /** The pod of session `sessionId`, restored from the log (`NotFoundError` when there is none). */
  restore(store: Store<Item>, sessionId: string): Promise<Pod>;
}
