import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import type { Dispatcher } from "@podkit/dispatch";
import type { Item } from "@podkit/llm-worker";
import { observeCommits, type Store } from "@podkit/session-store";
import { createApp } from "./app.js";
import { ServeUsageError } from "./errors.js";
import { DEFAULT_POLL_INTERVALS, notifiesAppends, type PollIntervals } from "./feed/append-wakers.js";
import { FeedHub } from "./feed/feed-hub.js";
import { SessionListFeed } from "./feed/session-list-feed.js";
import { DraftBoard } from "./runs/draft-board.js";
import type { PodSource } from "./runs/pod-source.js";
import { SessionRuns, type SessionRunsOptions } from "./runs/session-runs.js";
import { requiredCredentials } from "./security/bind-policy.js";
import type { ServeTokenHolder } from "./security/credentials.js";

/** Options of `startServer`. */
export interface ServeOptions {
  /** The session store to serve (the caller opened it and closes it after `close()`). */
  store: Store<Item>;
  /** Builds and restores the pods that run sessions. */
  pods: PodSource;
  /**
   * The directory the pods work in (the manifest's workspace): the recorded file paths of its
   * sessions are relative to it, and `POST /sessions/:id/rewind` restores files there. Without it
   * that route answers 501.
   */
  workspace?: string;
  /** Default `127.0.0.1`. Any address but a loopback one needs `token`. */
  host?: string;
  /** Default 4111; 0 picks a free port. */
  port?: number;
  /**
   * `PODKIT_SERVE_TOKEN`: clients send `Authorization: Bearer <token>`. It names nobody: answers
   * given with it are credited to the `by` the client sends, else to `anonymous (shared token)`.
   */
  token?: string;
  /**
   * Tokens that each name their holder (`podkit serve --tokens-file`): an approval answered with
   * one is credited to its holder. Accepted beside `token`.
   */
  tokens?: readonly ServeTokenHolder[];
  /** Origins allowed to call the API from a browser (CORS); none by default. */
  corsOrigins?: readonly string[];
  /** Request bodies above this are refused with 413 (default 1 MiB). */
  maxBodyBytes?: number;
  /** Event streams open at once (default 1024); more get 503. */
  maxStreams?: number;
  /** A comment is sent on an idle event stream this often (default 15 s). */
  keepaliveMs?: number;
  /** How feeds poll the log (see `PollIntervals`). */
  pollIntervals?: PollIntervals;
  /** How long idle pods stay open, and how many. */
  runs?: Omit<SessionRunsOptions, "dispatcher">;
  /**
   * Opens the dispatcher of the store's dispatched runs (`@podkit/dispatch`), when an approval
   * answered here completes what such a run waits for: the run is requeued for a worker instead of
   * continued by this server. Without one, answering the last call of a dispatched run fails with
   * a 409 saying where to answer it.
   */
  dispatcher?: () => Promise<Dispatcher>;
  /** Errors no route could explain (answered with a bare 500): log them. Default: stderr. */
  onUnexpectedError?: (error: unknown) => void;
  /** Warnings for the person running the server (debris left out of a listing). Default: stderr. */
  onWarning?: (message: string) => void;
}

/** A running server. */
export interface PodkitServer {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Ends every event stream, interrupts the runs, closes the pods and stops listening. */
  close(): Promise<void>;
}

const MIB = 1024 * 1024;

/**
 * Starts `podkit serve`'s HTTP server: the sessions of `store` as an API, each
 * session's log as a resumable event stream, the AI SDK's chat protocol and the session viewer.
 * Refuses a non-loopback `host` without a token (`ServeTokenRequiredError`).
 */
export async function startServer(options: ServeOptions): Promise<PodkitServer> {
  const host = options.host ?? "127.0.0.1";
  const port = options.port ?? 4111;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ServeUsageError(`invalid port ${port}`, {
      hint: "give a port from 1 to 65535 (0 picks a free one)",
    });
  }
  const credentials = requiredCredentials(host, options.token, options.tokens);
  const drafts = new DraftBoard();
  const committed = new Map<string, number>();
  const intervals = options.pollIntervals ?? DEFAULT_POLL_INTERVALS;
  const hub = new FeedHub(options.store, drafts, intervals);
  // The whole listing is read again on a poll only as a safety net where other machines' writes
  // are notified (PostgreSQL); on files it is how another process's appends show.
  const list = new SessionListFeed(options.store, {
    settleMs: 150,
    pollMs: notifiesAppends(options.store) ? 5 * intervals.safetyNetMs : intervals.safetyNetMs,
  });
  hub.onWake((ref) => list.touch(ref.sessionId));
  const podStore = observeCommits(options.store, ({ ref, count }) => {
    committed.delete(ref.segmentId); // re-inserted last: the map stays in order of use
    committed.set(ref.segmentId, count);
    if (committed.size > 4096) committed.delete(committed.keys().next().value as string);
    hub.wake(ref);
  });
  const runs = new SessionRuns(options.pods, podStore, drafts, (id) => committed.get(id), {
    ...options.runs,
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
  });
  await hub.start();
  let listening = port;
  const app = createApp({
    store: options.store,
    runs,
    hub,
    list,
    credentials,
    corsOrigins: options.corsOrigins ?? [],
    workspace: options.workspace,
    maxBodyBytes: options.maxBodyBytes ?? MIB,
    maxStreams: options.maxStreams ?? 1024,
    keepaliveMs: options.keepaliveMs ?? 15_000,
    port: () => listening,
    onWarning:
      options.onWarning ?? ((message) => process.stderr.write(`podkit serve: warning: ${message}\n`)),
    onUnexpectedError:
      options.onUnexpectedError ??
      ((error) => process.stderr.write(`podkit serve: ${(error as Error).stack ?? error}\n`)),
  });
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const started = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(started));
      started.once("error", reject);
    });
  } catch (error) {
    list.close();
    await hub.close();
    throw new ServeUsageError(`cannot listen on ${host}:${port}: ${(error as Error).message}`, {
      hint: "pick another --port (or stop what is using this one)",
      cause: error,
    });
  }
  listening = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${listening}`,
    host,
    port: listening,
    close: () => {
      closing ??= (async () => {
        list.close();
        await hub.close();
        await runs.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
      })();
      return closing;
    },
  };
}
