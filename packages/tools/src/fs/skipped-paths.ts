import type { SkipReason } from "./checked-open.js";
import { MAX_FILE_BYTES } from "./text.js";

/** How a reason reads in a summary. */
const REASON_WORDS: Record<string, string> = {
  binary: "binary, not searched",
  "not-regular": "not a regular file",
  "too-big": `over ${MAX_FILE_BYTES / 1024 / 1024} MiB`,
  changed: "changed while searched",
  unverifiable: "real path not verifiable (/proc/self/fd unreadable)",
  ENOENT: "vanished while searched",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
  ELOOP: "replaced by a symlink",
  ENAMETOOLONG: "path too long",
};

/**
 * What a search (glob, grep) had to leave out, by reason, with one example each, so a result
 * that is short because files could not be read says so instead of looking complete.
 */
export class SkippedPaths {
  private readonly byReason = new Map<string, { count: number; example: string }>();

  add(reason: SkipReason, shown: string): void {
    const seen = this.byReason.get(reason);
    if (seen) seen.count++;
    else this.byReason.set(reason, { count: 1, example: shown });
  }

  /** "" when nothing was left out; otherwise `; 3 paths left out: permission denied ×2 ("a/b"), …`. */
  summary(): string {
    if (this.byReason.size === 0) return "";
    let total = 0;
    const parts: string[] = [];
    for (const [reason, { count, example }] of this.byReason) {
      total += count;
      parts.push(`${REASON_WORDS[reason] ?? reason} ×${count} (e.g. "${example}")`);
    }
    return `; ${total} path${total === 1 ? "" : "s"} left out: ${parts.join(", ")}`;
  }
}
