import { type BigIntStats, constants, lstatSync, statSync } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { join } from "node:path";
import type { PromptCatalog } from "../catalog/prompt-catalog.js";
import { describeRootEscape, findRootEscape, isInside } from "../prompt-ref/root-containment.js";
import type { ContextSection } from "./context-section.js";

/** Where the `notes` section reads from, relative to the workspace. */
export const NOTES_FILE = ".podkit/NOTES.md";

/**
 * The most of NOTES.md the section shows, in bytes (about 4k tokens). The block goes into every
 * request and is committed to the log each time it changes, so a huge or endless file (a log
 * someone pointed it at, `/dev/zero`) must not become the context.
 */
export const NOTES_MAX_BYTES = 16 * 1024;

/**
 * How much older than a read the files must be for their stamp to be trusted next time: file
 * times advance in clock ticks (a few ms on Linux), or in whole seconds (up to 2 s on FAT) when
 * they carry no sub-second part.
 */
const RACY_MARGIN_MS = 100;
const COARSE_RACY_MARGIN_MS = 2_000;

interface NotesSectionOptions {
  /** Overrides both margins (tests: 0 trusts a stamp as soon as the clock moved on). */
  readonly racyMarginMs?: number;
}

/**
 * The builtin `notes` section: `<workspace>/.podkit/NOTES.md` as it is now. Loaded only when the
 * file exists and holds more than whitespace; a missing file is no section, not an error. A
 * NOTES.md (or `.podkit`) that resolves outside the workspace through a symbolic link, or that
 * is not a regular file, is refused unread with a warning; a file over `NOTES_MAX_BYTES` is cut
 * there with a warning and the catalog's `notes_truncation_notice` telling the model so. Each
 * distinct warning is given once, not before every request.
 */
export function createNotesSection(
  catalog: PromptCatalog,
  warn: (message: string) => void = () => {},
  options: NotesSectionOptions = {},
): ContextSection<string> {
  const notice = () =>
    catalog.render("notes_truncation_notice", { file: NOTES_FILE, max_bytes: NOTES_MAX_BYTES });
  let lastWarning: string | undefined;
  const warnOnce = (message: string) => {
    if (message !== lastWarning) warn(message);
    lastWarning = message;
  };
  // The last read and the stamp of the files it came from: an unchanged stamp means the same
  // outcome, so a request does not re-walk the path, re-open and re-read an unchanged NOTES.md.
  let cached: CachedRead | undefined;
  let podkitDir = { workspace: "", path: "" };
  return {
    id: "notes",
    async load(state) {
      const readAt = Date.now();
      if (podkitDir.workspace !== state.workspace)
        podkitDir = { workspace: state.workspace, path: join(state.workspace, ".podkit") };
      const dir = stampOf(podkitDir.path, lstatSync);
      let outcome: NotesRead;
      if (cached?.workspace === state.workspace && cached.absentFromDir && sameStamp(cached.dir, dir)) {
        // No entry was added to or removed from a real `.podkit` directory: NOTES.md is still absent.
        outcome = cached.outcome;
      } else {
        const stamp = notesStamp(state.workspace, dir);
        if (cached?.workspace === state.workspace && cached.stamp === stamp.text) {
          outcome = cached.outcome;
        } else {
          outcome = await readNotes(state.workspace, notice);
          // Kept only for files last changed well before this read: file times are coarse, so a
          // same-size rewrite within one tick could otherwise keep the stamp and its old text.
          const margin = options.racyMarginMs ?? (stamp.coarse ? COARSE_RACY_MARGIN_MS : RACY_MARGIN_MS);
          cached =
            stamp.changedMs < readAt - margin
              ? {
                  workspace: state.workspace,
                  dir,
                  stamp: stamp.text,
                  absentFromDir: stamp.absent && dir?.isDirectory() === true,
                  outcome,
                }
              : undefined;
        }
      }
      if (outcome.warning === undefined) lastWarning = undefined;
      else warnOnce(outcome.warning);
      const trimmed = outcome.text?.trim() ?? "";
      return trimmed === "" ? null : trimmed;
    },
    render: (notes) => notes,
  };
}

interface NotesRead {
  readonly text: string | null;
  readonly warning?: string;
}

interface CachedRead {
  readonly workspace: string;
  /** The `.podkit` entry's stats. */
  readonly dir: BigIntStats | null;
  readonly stamp: string;
  /** NOTES.md did not exist in a real `.podkit` directory. */
  readonly absentFromDir: boolean;
  readonly outcome: NotesRead;
}

/**
 * What identifies the files `readNotes` depends on: the `.podkit` entry itself (a directory
 * swapped for a link changes it), NOTES.md as reached through it (a link swapped in or retargeted
 * reaches another inode) and, when NOTES.md is a link, the file it points at: device, inode,
 * mode, size, and change and modification times in nanoseconds; a missing file is its own stamp.
 * `changedMs` is the latest change time among them; `coarse`: a time in whole seconds.
 */
function notesStamp(
  workspace: string,
  dir: BigIntStats | null,
): { text: string; absent: boolean; changedMs: number; coarse: boolean } {
  const file = join(workspace, NOTES_FILE);
  const entry = stampOf(file, lstatSync);
  const target = entry?.isSymbolicLink() ? stampOf(file, statSync) : null;
  return {
    text: `${stampText(dir)}|${stampText(entry)}|${stampText(target)}`,
    absent: entry === null,
    changedMs: Math.max(changedMsOf(dir), changedMsOf(entry), changedMsOf(target)),
    coarse: [dir, entry, target].some((s) => s !== null && s.mtimeNs % 1_000_000_000n === 0n),
  };
}

/** The same stamp as `stampText` gives, compared field by field (no string built before every request). */
function sameStamp(a: BigIntStats | null, b: BigIntStats | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.mode === b.mode &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

function stampText(s: BigIntStats | null): string {
  return s === null ? "-" : `${s.dev}:${s.ino}:${s.mode}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

function changedMsOf(s: BigIntStats | null): number {
  return s === null ? 0 : Math.max(Number(s.mtimeNs / 1_000_000n), Number(s.ctimeNs / 1_000_000n));
}

/**
 * `path`'s stats, or null when it does not exist. Synchronous on purpose: this runs before every
 * request, and a stat is one small call on the workspace's own `.podkit` (where the session store
 * writes synchronously too), while the promise API's round trip through the thread pool cost
 * about ten times the call itself and most of the notes section's share of a turn.
 */
function stampOf(path: string, statOf: typeof lstatSync | typeof statSync): BigIntStats | null {
  try {
    return statOf(path, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch (error) {
    // ENOTDIR: `.podkit` is a file, so NOTES.md is not there.
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw error;
  }
}

async function readNotes(workspace: string, notice: () => string): Promise<NotesRead> {
  const file = join(workspace, NOTES_FILE);
  // Same rule as the `$workspace` prompt root (issue 10): a cloned repository must not make the
  // pod send a file from elsewhere on the machine to the provider and into the session log.
  const breach = await findRootEscape(workspace, file);
  if (breach !== null) {
    return {
      text: null,
      warning: `${NOTES_FILE} is refused and not read: ${describeRootEscape(breach)}; make it a regular file inside the workspace`,
    };
  }
  let real: string;
  try {
    real = await realpath(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { text: null };
    throw error;
  }
  const workspaceReal = await realpath(workspace);
  if (!isInside(real, workspaceReal)) {
    return {
      text: null,
      warning: `${NOTES_FILE} is refused and not read: ${file} resolves to ${real}, outside ${workspaceReal}`,
    };
  }
  // The real path, not following a link swapped in since the check; non-blocking so a FIFO
  // cannot hold the open.
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { text: null };
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      return { text: null, warning: `${NOTES_FILE} is refused and not read: ${file} is not a regular file` };
    }
    // One read of at most the cap plus one byte: enough to know the file is longer.
    const buffer = Buffer.alloc(NOTES_MAX_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead <= NOTES_MAX_BYTES) return { text: buffer.toString("utf8", 0, bytesRead) };
    const kept = new TextDecoder("utf-8", { fatal: false })
      .decode(buffer.subarray(0, NOTES_MAX_BYTES))
      .replace(/\uFFFD$/, "");
    return {
      text: `${kept}\n\n${notice()}`,
      warning: `${file} has ${stats.size} bytes, over the ${NOTES_MAX_BYTES}-byte limit of the notes section; only its first ${NOTES_MAX_BYTES} bytes are sent to the model. Keep NOTES.md short (move long material to files the agent can read)`,
    };
  } finally {
    await handle.close();
  }
}
