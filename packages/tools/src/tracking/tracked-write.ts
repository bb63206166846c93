import type { ToolOutput } from "@podkit/llm-worker";
import type { FileTracking } from "./file-tracking.js";
import { readTracked } from "./read-tracked.js";
import { DEFAULT_TRACKING_LIMITS, lstatIfAny } from "./tree-scan.js";

/**
 * Writes through the pod's file tracking when it is on (`files`), else just writes: what
 * `write_file` and `edit_file` do. `before` is the file's content when the tool has read it
 * already; left out, it is read here (null when there is no file). `write` performs the write
 * and its error is thrown as it was. Returns the output member naming the change, if any.
 */
export async function writeTracked(
  files: FileTracking | undefined,
  path: string,
  contents: { readonly before?: Uint8Array | null; readonly after: Uint8Array },
  write: () => Promise<void>,
): Promise<Pick<ToolOutput, "fileChanges">> {
  const before =
    files === undefined || contents.before !== undefined ? contents.before : await currentContent(path);
  if (files === undefined || before === undefined) {
    await write();
    return {};
  }
  const change = await files.write(path, before, async () => {
    await write();
    return contents.after;
  });
  return change === undefined ? {} : { fileChanges: [change] };
}

/**
 * The content of the file a write is about to replace: null when there is none; undefined when
 * it cannot be kept (larger than the tracking bound, or not readable), and the write goes
 * unrecorded.
 */
async function currentContent(path: string): Promise<Uint8Array | null | undefined> {
  const stat = await lstatIfAny(path);
  if (stat === undefined) return null;
  if (!stat.isFile() || stat.size > DEFAULT_TRACKING_LIMITS.maxBytes) return undefined;
  return (await readTracked(path))?.bytes;
}
