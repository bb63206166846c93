import type { SegmentRef } from "@podkit/session-store";
import type pg from "pg";
import { APPEND_CHANNEL } from "./migrations.js";

/** How long a lost listening connection waits before it connects again. */
const RECONNECT_MS = 1_000;

/**
 * LISTENs on `podkit_append` with one connection of `pool` and calls `onAppend` for each committed
 * write to a segment of `schema` (the trigger of migration 2 sends them, from every machine). A
 * lost connection is replaced after a second; notifications sent meanwhile are lost, so a reader
 * keeps a slow poll as well.
 */
export async function listenForAppends(
  pool: pg.Pool,
  schema: string,
  onAppend: (ref: SegmentRef) => void,
): Promise<{ close(): Promise<void> }> {
  const prefix = `${schema}/`;
  let client: pg.PoolClient | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const onNotification = (message: pg.Notification) => {
    if (message.channel !== APPEND_CHANNEL || !message.payload?.startsWith(prefix)) return;
    const [sessionId, segmentId] = message.payload.slice(prefix.length).split("/");
    if (sessionId && segmentId) onAppend({ sessionId, segmentId });
  };
  const lost = () => {
    const previous = client;
    client = undefined;
    previous?.release(true);
    if (closed || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch(lost);
    }, RECONNECT_MS);
    retry.unref();
  };
  const connect = async () => {
    const next = await pool.connect();
    next.on("notification", onNotification);
    next.on("error", lost);
    try {
      await next.query(`LISTEN ${APPEND_CHANNEL}`);
    } catch (error) {
      next.release(true);
      throw error;
    }
    if (closed) {
      next.release(true);
      return;
    }
    client = next;
  };
  await connect();
  return {
    close: async () => {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      const current = client;
      client = undefined;
      if (current === undefined) return;
      current.off("error", lost);
      await current.query(`UNLISTEN ${APPEND_CHANNEL}`).catch(() => undefined);
      current.release();
    },
  };
}
