import type { ToolOutput } from "@podkit/llm-worker";
import type { FileChange } from "./files-changed.js";

/**
 * A pod's file tracking as tool packages see it (`ToolPackageContext.files`, docs/rewind.md):
 * what records the files a call changes, with their contents in the session store's blobs, so
 * the pod can log them as a `files.changed` entry and rewind can put them back.
 */
export interface FileTracking {
  /**
   * Starts the first scan of the tracked tree in the background. A package whose calls go
   * through `around` calls it when its tools are made, so the first call does not wait for it.
   */
  prepare(): void;
  /**
   * Runs `call` (a command, a request to a local server: anything that may write files by other
   * means than `write`) and returns its output with the files that changed under the tracked
   * roots while it ran added to `fileChanges`. One `lstat` scan of the tree per call, or `git
   * status` around it beyond the bounds; when neither can run, the call runs untracked (and a
   * `files.tracking_skipped` warning says why, once).
   */
  around(call: () => Promise<ToolOutput>, signal: AbortSignal): Promise<ToolOutput>;
  /**
   * A write the package makes itself, to the canonical `path` (what `write_file` and `edit_file`
   * do): `before` is the file's content (null: no file), `write` writes it and returns the new
   * content (null: it removed the file). Both go into the blobs and the change comes back, for
   * the call's `fileChanges`; undefined when the path is outside the workspace, nothing changed,
   * or storing failed (warned about). An error of `write` is thrown as it was.
   */
  write(
    path: string,
    before: Uint8Array | null,
    write: () => Promise<Uint8Array | null>,
  ): Promise<FileChange | undefined>;
}
