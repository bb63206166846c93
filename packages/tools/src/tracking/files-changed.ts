import { z } from "zod";

/**
 * The `extension` domain of the log entry that records the files one tool call changed
 * (docs/rewind.md, "File changes in the log"). Additive in session format 3.
 */
export const FILES_CHANGED_DOMAIN = "files.changed";

/** A blob's name: `sha256:` and 64 lowercase hex digits (as `@podkit/session-store` names blobs). */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * True for a path as file-change entries spell it: relative to the workspace, POSIX separators,
 * no `.`/`..`/empty component and no NUL, so joining it to any workspace stays inside it.
 */
export function isWorkspacePath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.includes("\\") || path.includes("\0")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

const digestOrNull = z
  .string()
  .regex(DIGEST, { error: 'expected "sha256:" and 64 lowercase hex digits' })
  .nullable();

/** One changed file: its content's digest before and after the call, `null` where it did not exist. */
export const fileChangeSchema = z
  .strictObject({
    path: z.string().refine(isWorkspacePath, {
      error: "expected a workspace-relative POSIX path without '.', '..' or empty components",
    }),
    before: digestOrNull,
    after: digestOrNull,
  })
  .refine((change) => change.before !== change.after, {
    error: "before and after are the same: nothing changed",
  });

/** One changed file of a `files.changed` entry. */
export type FileChange = z.infer<typeof fileChangeSchema>;

/**
 * The payload of a `files.changed` entry: the call that changed the files, its tool, and each
 * file's digests before and after, in the order the tool reported them (a path at most once).
 */
export const filesChangedSchema = z.strictObject({
  call_id: z.string().min(1),
  tool: z.string().min(1),
  changes: z
    .array(fileChangeSchema)
    .min(1)
    .refine((changes) => new Set(changes.map((change) => change.path)).size === changes.length, {
      error: "a path is listed twice",
    }),
});

/** The payload of a `files.changed` entry. */
export type FilesChanged = z.infer<typeof filesChangedSchema>;

/**
 * The payload of a `files.changed` entry read from a log (untrusted): the parsed payload, or
 * undefined when it is not one (rewind and the read models leave such an entry out).
 */
export function parseFilesChanged(payload: unknown): FilesChanged | undefined {
  const parsed = filesChangedSchema.safeParse(payload);
  return parsed.success ? parsed.data : undefined;
}
