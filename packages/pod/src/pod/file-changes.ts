import type { ToolCallItem, ToolOutput } from "@podkit/llm-worker";
import type { BlobStore } from "@podkit/session-store";
import { FILES_CHANGED_DOMAIN, type FileChange, type FilesChanged, filesChangedSchema } from "@podkit/tools";
import type { PodWarning } from "../warnings.js";

/** What recording a call's file changes needs of the pod. */
export interface FileChangeRecorder {
  /** The session store's blobs, where the tool stored the contents; undefined: the store keeps none. */
  readonly blobs: BlobStore | undefined;
  readonly warn: (warning: PodWarning) => void;
  /** Appends an `extension` entry to the head segment. */
  append(domain: string, payload: FilesChanged): Promise<void>;
}

/**
 * After a call: the files its tool reported changing (`ToolOutput.fileChanges`) become one
 * `files.changed` entry (docs/rewind.md, "File changes in the log"), written before the call's
 * `tool_result` is committed. The report is a tool package's claim, checked like everything read
 * from outside: a malformed one is dropped whole, and a change naming a digest the blobs do not
 * hold is left out — an entry names only contents rewind can get back. Each with a warning.
 */
export async function recordFileChanges(
  call: ToolCallItem,
  output: Readonly<ToolOutput>,
  recorder: FileChangeRecorder,
): Promise<void> {
  const reported = output.fileChanges;
  if (reported === undefined || reported.length === 0) return;
  const warn = (message: string) =>
    recorder.warn({
      code: "pod.tools",
      message: `${FILES_CHANGED_DOMAIN}: ${call.name} (${call.call_id}) ${message}`,
    });
  const parsed = filesChangedSchema.safeParse({ call_id: call.call_id, tool: call.name, changes: reported });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    warn(
      `reported file changes that are not valid, none recorded: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`,
    );
    return;
  }
  const { blobs } = recorder;
  if (blobs === undefined) {
    warn("reported file changes, but the session store keeps no blobs for their contents; none recorded");
    return;
  }
  const stored = await Promise.all(parsed.data.changes.map((change) => contentsStored(blobs, change)));
  const changes = parsed.data.changes.filter((_, index) => stored[index]);
  const missing = parsed.data.changes.filter((_, index) => !stored[index]).map((change) => change.path);
  if (missing.length > 0)
    warn(`named contents the blobs do not hold for ${missing.join(", ")}; those changes are not recorded`);
  if (changes.length > 0) await recorder.append(FILES_CHANGED_DOMAIN, { ...parsed.data, changes });
}

async function contentsStored(blobs: BlobStore, change: FileChange): Promise<boolean> {
  const digests = [change.before, change.after].filter((digest): digest is string => digest !== null);
  return (await Promise.all(digests.map((digest) => blobs.has(digest)))).every(Boolean);
}
