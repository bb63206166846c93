import { describeSession, type Entry, type Store } from "@podkit/session-store";
import type { EntryRef } from "../dispatcher.js";
import { DispatchError } from "../errors.js";

/** How often a submit re-reads the head after another writer's append got in first. */
const MAX_DRIFT_RETRIES = 5;

/**
 * Appends `entry` to the head segment of an existing session and returns where it landed. The
 * append is conditional on the count just read, and on drift it reads again and retries: unlike
 * `SessionLog`, a submitter never forks the session (it is not the session's writer, only a guest
 * adding one entry between runs). Fails with the store's typed error (`NotFoundError`, …).
 */
export async function appendToHead<TItem>(
  store: Store<TItem>,
  sessionId: string,
  entry: Entry<TItem>,
): Promise<EntryRef> {
  for (let attempt = 0; ; attempt++) {
    const { head } = await describeSession(store, sessionId);
    const ref = { sessionId, segmentId: head.segmentId };
    const outcome = await store.append(ref, [entry], { expectedCount: head.entryCount });
    if (outcome.status === "appended") return { segmentId: head.segmentId, index: head.entryCount };
    if (attempt >= MAX_DRIFT_RETRIES) {
      throw new DispatchError(
        `session ${sessionId} kept changing while a run was submitted (${MAX_DRIFT_RETRIES + 1} tries): another writer is active`,
        { hint: "submit when the session's other writer (an interactive `podkit run`?) has stopped" },
      );
    }
  }
}
