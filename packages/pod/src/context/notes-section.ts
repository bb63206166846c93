import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { join } from "node:path";
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
 * The builtin `notes` section: `<workspace>/.podkit/NOTES.md` as it is now. Loaded only when the
 * file exists and holds more than whitespace; a missing file is no section, not an error. A
 * NOTES.md (or `.podkit`) that resolves outside the workspace through a symbolic link, or that
 * is not a regular file, is refused unread with a warning; a file over `NOTES_MAX_BYTES` is cut
 * there with a warning and a closing line telling the model so. Each distinct warning is given
 * once, not before every request.
 */
export function createNotesSection(warn: (message: string) => void = () => {}): ContextSection<string> {
  let lastWarning: string | undefined;
  const warnOnce = (message: string) => {
    if (message !== lastWarning) warn(message);
    lastWarning = message;
  };
  return {
    id: "notes",
    async load(state) {
      const outcome = await readNotes(state.workspace);
      if (outcome.warning === undefined) lastWarning = undefined;
      else warnOnce(outcome.warning);
      const trimmed = outcome.text?.trim() ?? "";
      return trimmed === "" ? null : trimmed;
    },
    render: (notes) => notes,
  };
}

/** The builtin `notes` section without a warning sink (a pod wires its own, see `createNotesSection`). */
export const notesSection: ContextSection<string> = createNotesSection();

interface NotesRead {
  readonly text: string | null;
  readonly warning?: string;
}

async function readNotes(workspace: string): Promise<NotesRead> {
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
      text: `${kept}\n\n[… ${NOTES_FILE} continues: only its first ${NOTES_MAX_BYTES} bytes are shown]`,
      warning: `${file} has ${stats.size} bytes, over the ${NOTES_MAX_BYTES}-byte limit of the notes section; only its first ${NOTES_MAX_BYTES} bytes are sent to the model. Keep NOTES.md short (move long material to files the agent can read)`,
    };
  } finally {
    await handle.close();
  }
}
