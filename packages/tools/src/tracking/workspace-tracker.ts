import type { ToolOutput } from "@podkit/llm-worker";
import type { BlobWriter, ToolWarningSink } from "../package/tool-package.js";
import type { ToolSandbox } from "../sandbox/sandbox.js";
import type { FileTracking } from "./file-tracking.js";
import type { FileChange } from "./files-changed.js";
import { WorkspaceGit } from "./git-status.js";
import { readTracked } from "./read-tracked.js";
import type { TrackedTree } from "./tracked-tree.js";
import {
  DEFAULT_TRACKING_LIMITS,
  type FileStat,
  lstatIfAny,
  sameStat,
  scanTree,
  type TrackingLimits,
} from "./tree-scan.js";

/**
 * How far before a call's start a change time still counts as the call's: kernels stamp files
 * from a coarse clock, and some file systems keep times to the second or two. What falls in the
 * margin was changed by someone else just before the call; counting it as the call's only moves
 * an outside edit into the record, never loses one of the pod's.
 */
const MARGIN_MS = 2_000;
/** A file changed this close to a scan may change again within the same clock tick: look again next time. */
const RACY_MS = 50;
/** A call this long after the last scan scans first, so edits made meanwhile are not counted as its own. */
const PRESCAN_AFTER_MS = 30_000;
/**
 * Blobs of unchanged files are stored again after this long: unreferenced blobs older than the
 * garbage collection's grace period (one hour by default) may be collected, and a file's current
 * content is the `before` of the next command that changes it.
 */
const RENEW_AFTER_MS = 20 * 60_000;
/** Files read and stored at once. */
const READ_BATCH = 8;

/** What the tracker knows of a file: its stat at the last look, and the blob of its content then. */
interface IndexEntry extends FileStat {
  readonly digest: string;
  /** Changed so close to the scan that a later change may keep the same stat: read again. */
  readonly racy: boolean;
  /** When its blob was last stored. */
  readonly putAt: number;
  /** Order of index updates: a scan keeps its hands off entries a write updated while it ran. */
  readonly seq: number;
}

type Mode =
  | { readonly kind: "scan" }
  | { readonly kind: "git"; readonly git: WorkspaceGit }
  | { readonly kind: "off" };

export interface WorkspaceTrackerOptions {
  readonly tree: TrackedTree;
  readonly blobs: BlobWriter;
  readonly warn: ToolWarningSink;
  /** Where the git fallback runs git. */
  readonly sandbox: ToolSandbox;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly limits?: TrackingLimits;
  /** Stops scans when the tools close. */
  readonly signal?: AbortSignal;
  readonly clock?: () => number;
}

/**
 * The file tracking of one pod (docs/rewind.md, "What is tracked"). It keeps an index like git's:
 * for every tracked file its stat at the last look and the digest of its content then, whose
 * bytes are in the blobs — so the `before` of a file a command rewrites is already stored when
 * the command runs. A call through `around` is followed by one scan: files whose stat changed are
 * read and stored, and what changed since the index, at or after the call's start by the
 * kernel's change time, is the call's. Writes of the file tools update the index as they go.
 * Beyond the bounds it falls back to `git status` around each call, or tracks nothing and says
 * so once. Scans run one at a time; calls run in parallel with each other and with writes.
 */
export class WorkspaceTracker implements FileTracking {
  private readonly index = new Map<string, IndexEntry>();
  private seq = 0;
  private mode: Promise<Mode> | undefined;
  /** The mode once decided (writes keep the index only while it is, or may become, "scan"). */
  private decided: Mode["kind"] | undefined;
  private lock: Promise<unknown> = Promise.resolve();
  private lastScanAt = Number.NEGATIVE_INFINITY;
  /** The starts of the calls running under `around`. */
  private readonly running = new Set<{ readonly start: number }>();
  /** The start of a call whose output was abandoned (an abort): its changes go to the next call. */
  private carried: number | undefined;
  /** Paths a `write` is writing now: scans leave them to it. */
  private readonly writing = new Map<string, number>();
  private readonly warned = new Set<string>();
  private readonly limits: TrackingLimits;
  private readonly clock: () => number;

  constructor(private readonly options: WorkspaceTrackerOptions) {
    this.limits = options.limits ?? DEFAULT_TRACKING_LIMITS;
    this.clock = options.clock ?? Date.now;
  }

  prepare(): void {
    void this.ready();
  }

  async around(call: () => Promise<ToolOutput>, signal: AbortSignal): Promise<ToolOutput> {
    const mode = await this.ready();
    if (mode.kind === "off") return call();
    if (mode.kind === "git") return this.aroundGit(mode.git, call, signal);
    if (
      this.carried === undefined &&
      this.running.size === 0 &&
      this.clock() - this.lastScanAt > PRESCAN_AFTER_MS
    ) {
      // Whatever changed since the last look was not this call's: it goes into the index unrecorded.
      await this.exclusive(() => this.refresh(undefined)).catch((error: unknown) => this.failed(error));
    }
    const started = { start: this.clock() };
    this.running.add(started);
    let output: ToolOutput;
    try {
      output = await call();
    } finally {
      this.running.delete(started);
    }
    const threshold = Math.min(
      started.start,
      this.carried ?? Infinity,
      ...[...this.running].map((r) => r.start),
    );
    if (signal.aborted) {
      // Nobody will see this output: the changes wait for the next call's scan.
      this.carried = threshold;
      return output;
    }
    let found: FileChange[] | "over";
    try {
      found = await this.exclusive(() => this.refresh(threshold));
    } catch (error) {
      this.failed(error);
      return output;
    }
    this.carried = undefined;
    if (found === "over") {
      this.mode = this.fallBack("grew past").then((next) => {
        this.decided = next.kind;
        return next;
      });
      return output;
    }
    return withChanges(output, found);
  }

  async write(
    path: string,
    before: Uint8Array | null,
    write: () => Promise<Uint8Array | null>,
  ): Promise<FileChange | undefined> {
    const rel = this.options.tree.relative(path);
    if (rel === undefined) {
      await write();
      return undefined;
    }
    this.writing.set(rel, (this.writing.get(rel) ?? 0) + 1);
    try {
      const after = await write();
      const put = (bytes: Uint8Array | null) => (bytes === null ? null : this.options.blobs.put(bytes));
      let digests: [string | null, string | null];
      try {
        digests = await Promise.all([put(before), put(after)]);
      } catch (error) {
        this.failed(error);
        return undefined;
      }
      const [was, now] = digests;
      await this.keepIndexed(rel, path, now);
      return was === now ? undefined : { path: rel, before: was, after: now };
    } finally {
      const count = (this.writing.get(rel) ?? 1) - 1;
      if (count === 0) this.writing.delete(rel);
      else this.writing.set(rel, count);
    }
  }

  /**
   * Resolves once no scan is running (one in progress stops at its next batch once the tools'
   * signal fired): the tools wait for it when they close, so the store is not closed under a put.
   */
  async settled(): Promise<void> {
    await this.lock;
  }

  /** The tracking mode, decided by the first scan (run once, in the background from `prepare`). */
  private ready(): Promise<Mode> {
    this.mode ??= this.exclusive(() => this.refresh(undefined))
      .then(
        (found): Mode | Promise<Mode> =>
          found === "over" ? this.fallBack("holds more than") : { kind: "scan" },
        (error: unknown): Mode => {
          if (!this.options.signal?.aborted)
            this.skip(`the first scan of the workspace failed: ${messageOf(error)}`);
          return { kind: "off" };
        },
      )
      .then((mode) => {
        this.decided = mode.kind;
        return mode;
      });
    return this.mode;
  }

  /** Beyond the bounds: `git status` around each call when the workspace is a work tree, else nothing. */
  private async fallBack(how: "holds more than" | "grew past"): Promise<Mode> {
    this.index.clear();
    this.decided = undefined;
    const lost = how === "grew past" ? "this call's changes are not recorded; " : "";
    const bounds = `${lost}the tracked part of the workspace ${how} ${this.limits.maxFiles} files or ${mib(this.limits.maxBytes)} MiB`;
    const git = await WorkspaceGit.open(
      this.options.sandbox,
      this.options.tree.workspace,
      this.options.env,
    ).catch((error: unknown) => messageOf(error));
    if (typeof git === "string") {
      this.skip(`${bounds}, and the git fallback cannot be used: ${git}; commands' changes are not recorded`);
      return { kind: "off" };
    }
    this.options.warn({
      code: "files.tracking_git",
      message: `file tracking: ${bounds}; commands' changes are found with git status from now on (files git ignores are not tracked)`,
      source: "files",
    });
    return { kind: "git", git };
  }

  /**
   * One scan: every tracked file whose stat differs from the index (or whose blob is due for
   * renewal) is read and stored, then the index follows the tree. With `threshold`, what changed
   * at or after it (less the margin) comes back as changes; without, nothing is recorded.
   */
  private async refresh(threshold: number | undefined): Promise<FileChange[] | "over"> {
    const { tree, blobs } = this.options;
    const startedAt = this.clock();
    const since = this.seq;
    const outcome = await scanTree(tree, this.limits, this.options.signal);
    if (!outcome.ok) return "over";
    const { files, dirs, unlisted } = outcome.scan;
    const hidden = (rel: string) => unlisted.some((dir) => dir === "" || rel.startsWith(`${dir}/`));
    const renewBefore = startedAt - RENEW_AFTER_MS;
    const stale: string[] = [];
    for (const [rel, stat] of files) {
      const known = this.index.get(rel);
      if (this.writing.has(rel)) continue;
      if (known !== undefined && !known.racy && sameStat(known, stat) && known.putAt >= renewBefore) continue;
      stale.push(rel);
    }
    const counts = (time: number) => threshold !== undefined && time >= threshold - MARGIN_MS;
    const changes: FileChange[] = [];
    for (let at = 0; at < stale.length; at += READ_BATCH) {
      this.options.signal?.throwIfAborted();
      await Promise.all(
        stale.slice(at, at + READ_BATCH).map(async (rel) => {
          const known = this.index.get(rel);
          const content = await readTracked(`${tree.workspace}/${rel}`);
          if (content === undefined) return; // gone or replaced while we looked: the next scan sees it
          const digest = await blobs.put(content.bytes);
          const current = this.index.get(rel);
          if (this.writing.has(rel) || (current !== undefined && current.seq > since)) return;
          const racy = content.unsettled || content.stat.ctimeMs >= startedAt - RACY_MS;
          this.index.set(rel, { ...content.stat, digest, racy, putAt: this.clock(), seq: ++this.seq });
          if (known?.digest === digest) return;
          // A new name counts when its directory changed during the call (a rename keeps the file's ctime on some systems).
          if (counts(content.stat.ctimeMs) || (known === undefined && counts(dirTime(dirs, rel))))
            changes.push({ path: rel, before: known?.digest ?? null, after: digest });
        }),
      );
    }
    for (const [rel, known] of this.index) {
      if (files.has(rel) || this.writing.has(rel) || known.seq > since || hidden(rel)) continue;
      this.index.delete(rel);
      if (counts(dirTime(dirs, rel))) changes.push({ path: rel, before: known.digest, after: null });
    }
    this.lastScanAt = startedAt;
    return changes.sort(byPath);
  }

  /** After a `write`: the index holds the new content, to be looked at again (a command may race it). */
  private async keepIndexed(rel: string, path: string, digest: string | null): Promise<void> {
    if (this.decided !== undefined && this.decided !== "scan") return;
    const stat = digest === null ? undefined : await lstatIfAny(path);
    if (digest === null || stat === undefined || !stat.isFile()) {
      this.index.delete(rel);
      return;
    }
    const entry = { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
    this.index.set(rel, { ...entry, digest, racy: true, putAt: this.clock(), seq: ++this.seq });
  }

  /** `git status` before and after the call; the before of a file clean until then is git's copy. */
  private async aroundGit(
    git: WorkspaceGit,
    call: () => Promise<ToolOutput>,
    signal: AbortSignal,
  ): Promise<ToolOutput> {
    let before: Map<string, string | null> | string;
    try {
      before = await this.dirtyContents(git);
    } catch (error) {
      before = messageOf(error);
    }
    if (typeof before === "string") {
      this.skip(`git status could not be used: ${before}; this call's changes are not recorded`);
      return call();
    }
    const output = await call();
    if (signal.aborted) return output;
    try {
      const after = await this.dirtyPaths(git);
      if (after === undefined) throw new Error("git status failed after the call");
      const changes: FileChange[] = [];
      for (const rel of [...new Set([...before.keys(), ...after])].sort()) {
        const now = await this.contentDigest(rel);
        const was = before.has(rel) ? (before.get(rel) ?? null) : await this.indexedDigest(git, rel);
        if (was !== now) changes.push({ path: rel, before: was, after: now });
      }
      return withChanges(output, changes);
    } catch (error) {
      this.failed(error);
      return output;
    }
  }

  /** The dirty files before a call, each with the digest of its content (stored), null when deleted. */
  private async dirtyContents(git: WorkspaceGit): Promise<Map<string, string | null> | string> {
    const paths = await this.dirtyPaths(git);
    if (paths === undefined) return "git status failed";
    if (paths.length > this.limits.maxFiles)
      return `it lists more than ${this.limits.maxFiles} changed files`;
    const contents = new Map<string, string | null>();
    let bytes = 0;
    for (const rel of paths) {
      const content = await readTracked(`${this.options.tree.workspace}/${rel}`);
      bytes += content?.bytes.length ?? 0;
      if (bytes > this.limits.maxBytes)
        return `its changed files hold more than ${mib(this.limits.maxBytes)} MiB`;
      contents.set(rel, content === undefined ? null : await this.options.blobs.put(content.bytes));
    }
    return contents;
  }

  /** What `git status` lists, as tracked workspace-relative paths. */
  private async dirtyPaths(git: WorkspaceGit): Promise<string[] | undefined> {
    const listed = await git.dirty();
    if (listed === undefined) return undefined;
    const tree = this.options.tree;
    return listed.flatMap((path) => {
      const rel = tree.relative(`${git.top}/${path}`);
      return rel !== undefined && tree.tracksRelative(rel) ? [rel] : [];
    });
  }

  private async contentDigest(rel: string): Promise<string | null> {
    const content = await readTracked(`${this.options.tree.workspace}/${rel}`);
    return content === undefined ? null : this.options.blobs.put(content.bytes);
  }

  private async indexedDigest(git: WorkspaceGit, rel: string): Promise<string | null> {
    const bytes = await git.indexed(`${this.options.tree.workspace}/${rel}`.slice(git.top.length + 1));
    return bytes === undefined ? null : this.options.blobs.put(bytes);
  }

  /** Runs `work` after every scan queued before it. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** A tracking failure (the store refused a blob, say): the call goes on, its changes are not recorded. */
  private failed(error: unknown): void {
    if (this.options.signal?.aborted) return;
    this.options.warn({
      code: "files.tracking_failed",
      message: `file tracking failed, this call's changes are not recorded: ${messageOf(error)}`,
      source: "files",
    });
  }

  /** Says once, per reason, that something is not tracked. */
  private skip(reason: string): void {
    if (this.warned.has(reason)) return;
    this.warned.add(reason);
    this.options.warn({
      code: "files.tracking_skipped",
      message: `file tracking skipped: ${reason}`,
      source: "files",
    });
  }
}

/** The output with `changes` added to what the tool reported itself (its own word wins for a path). */
function withChanges(output: ToolOutput, changes: readonly FileChange[]): ToolOutput {
  if (changes.length === 0) return output;
  const own = output.fileChanges ?? [];
  const reported = new Set(own.map((change) => change.path));
  return { ...output, fileChanges: [...own, ...changes.filter((change) => !reported.has(change.path))] };
}

/** When the nearest directory of `rel` the scan found last had an entry added or removed. */
function dirTime(dirs: ReadonlyMap<string, number>, rel: string): number {
  for (let cut = rel.lastIndexOf("/"); ; cut = rel.lastIndexOf("/", cut - 1)) {
    const time = dirs.get(cut < 0 ? "" : rel.slice(0, cut));
    if (time !== undefined) return time;
    if (cut < 0) return Number.POSITIVE_INFINITY;
  }
}

function byPath(a: FileChange, b: FileChange): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function mib(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
