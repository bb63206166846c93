import { createHash } from "node:crypto";
import { MemoryFileRefusedError } from "../errors.js";
import { splitRecord } from "../records/frontmatter.js";
import { memoryPaths } from "../records/layout.js";
import { formatTimestamp } from "../records/record-schema.js";
import { podkitRoot, readContained } from "../store/contained-read.js";
import { appendUsage } from "../store/usage-log.js";
import type { MemoryPrompts } from "../worker/memory-model.js";

/**
 * The shape of a pod context section (`ContextSection` of `@podkit/pod`), repeated here
 * so memory does not depend on the pod: `load` gives the data (null: not shown), `render` its text.
 */
export interface ContextSectionLike<T> {
  readonly id: string;
  load(state: unknown): T | null | Promise<T | null>;
  render(data: T): string;
}

/**
 * The `memory` context section: the body of `.podkit/memory/summary.md`, loaded only when the
 * file exists, resolves inside `.podkit` and says something, rendered with the catalog's `resident_memory_section`. The pod
 * re-commits a section only when its data changes, so the summary enters the conversation once
 * per change, not on every turn. Each new summary shown is recorded in the usage log as `shown`.
 */
export function memoryContextSection(
  workspace: string,
  prompts: MemoryPrompts,
  options: { clock?: () => Date } = {},
): ContextSectionLike<string> {
  const paths = memoryPaths(workspace);
  let lastShown: string | undefined;
  return {
    id: "memory",
    async load() {
      // A summary linked out of .podkit (or oversized) is refused: the pod reports the error as a
      // warning and the secret it points at never enters the conversation.
      const read = await readContained(
        paths.summaryFile,
        await podkitRoot(workspace),
        ".podkit/memory/summary.md",
      );
      if (read === undefined) return null;
      if (!read.ok) throw new MemoryFileRefusedError(read.problem);
      const text = read.text;
      const split = splitRecord(text);
      const body = (split.ok ? split.body : text).trim();
      if (body === "") return null;
      const hash = createHash("sha256").update(body).digest("hex");
      if (hash !== lastShown) {
        lastShown = hash;
        const ts = formatTimestamp((options.clock ?? (() => new Date()))());
        await appendUsage(paths.usageLog, {
          ts,
          event: "shown",
          kind: "summary",
          slug: "summary",
          by: "pod",
        }).catch(() => undefined);
      }
      return body;
    },
    render: (summary) => prompts.render("resident_memory_section", { summary }),
  };
}
