import type { EntryInput, MinimalItem } from "../entry/entry-schema.js";
import { SessionBusyError } from "../errors.js";
import type { Store } from "../store/store.js";
import { SessionLog } from "./session-log.js";
import type { SessionLogOptions } from "./session-log-types.js";

/** Re-reads after a lost race before giving up with `SessionBusyError`. */
const MAX_GUEST_ATTEMPTS = 6;

/**
 * Appends one entry to the head segment of session `sessionId` as a **guest** — a process that does
 * not run the session but adds to it between its runs: an approval's answer (`answerApproval`), a
 * dispatched run's input (`submitRun`). The head is read, `build` makes the entry from what it holds
 * (and may throw a typed error: nothing is written then), and the entry is appended only if nobody
 * wrote since the read (`ifUnchanged`): a guest never forks a session. On a lost race it reads again
 * and retries, at most a few times, then fails with `SessionBusyError`. `first` is a writer already
 * open on the session (a pod's), tried before a fresh read. Resolves with the entry's place and the
 * log it was written through.
 */
export async function appendAsGuest<TItem = MinimalItem, T = void>(
  store: Store<TItem>,
  sessionId: string,
  build: (log: SessionLog<TItem>) => { entry: EntryInput<TItem>; result: T },
  options: SessionLogOptions<TItem> & { first?: SessionLog<TItem> } = {},
): Promise<{ result: T; log: SessionLog<TItem>; segmentId: string; index: number }> {
  for (let attempt = 1; ; attempt++) {
    const log =
      attempt === 1 && options.first !== undefined
        ? options.first
        : await SessionLog.open(store, sessionId, options);
    const { entry, result } = build(log);
    try {
      const { segmentId, index } = await log.append(entry, { ifUnchanged: true });
      return { result, log, segmentId, index };
    } catch (error) {
      if (!SessionBusyError.isInstance(error) || attempt >= MAX_GUEST_ATTEMPTS) throw error;
    }
  }
}
