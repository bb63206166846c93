import { createHash } from "node:crypto";
import { MemoryFileRefusedError } from "../errors.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import { splitRecord } from "../records/frontmatter.js";
import { memoryPaths } from "../records/layout.js";
import { formatTimestamp } from "../records/record-schema.js";
import { podkitRoot, readContained } from "../store/contained-read.js";
import { invocableKnowledgeView } from "../store/knowledge-index.js";
import { appendUsage } from "../store/usage-log.js";
import type { InvocableKnowledgeView, MemoryPrompts } from "../worker/memory-model.js";

/**
 * The shape of a pod context section (`ContextSection` of `@podkit/pod`), repeated here
 * so memory does not depend on the pod: `load` gives the data (null: not shown), `render` its text.
 */
export interface ContextSectionLike<T> {
  readonly id: string;
  load(state: unknown): T | null | Promise<T | null>;
  render(data: T): string;
}

/** What the `memory` section shows: the resident summary and the knowledge a pod may call up. */
export interface MemorySectionData {
  readonly summary: string | null;
  readonly knowledge: readonly InvocableKnowledgeView[];
}

/**
 * The `memory` context section: the body of `.podkit/memory/summary.md` (when the file exists,
 * resolves inside `.podkit` and says something), rendered with the catalog's
 * `resident_memory_section`, and the names and descriptions of the knowledge entries with
 * `model_invocation: true` in slug order, rendered with `memory_knowledge_section` (their bodies
 * are read with `knowledge_read`). The pod re-commits a section only when its data changes, so
 * the block enters the conversation once per change of the summary or of that list — never
 * because another record changed. Each new summary and list shown is recorded as `shown`.
 */
export function memoryContextSection(
  workspace: string,
  prompts: MemoryPrompts,
  options: { clock?: () => Date; knowledge?: () => Promise<readonly ParsedRecord[]> } = {},
): ContextSectionLike<MemorySectionData> {
  const paths = memoryPaths(workspace);
  const shown = new Map<string, string>();
  /** Records `shown` for what the model sees for the first time (or changed). */
  const noteShown = async (
    key: string,
    value: unknown,
    events: { kind: "summary" | "knowledge"; slug: string }[],
  ) => {
    const hash = createHash("sha256").update(JSON.stringify(value)).digest("hex");
    if (shown.get(key) === hash) return;
    shown.set(key, hash);
    const ts = formatTimestamp((options.clock ?? (() => new Date()))());
    for (const event of events)
      await appendUsage(paths, { ts, event: "shown", ...event, by: "pod" }).catch(() => undefined);
  };
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
      if (read !== undefined && !read.ok) throw new MemoryFileRefusedError(read.problem);
      const split = read === undefined ? undefined : splitRecord(read.text);
      const body = read === undefined ? "" : (split?.ok === true ? split.body : read.text).trim();
      const knowledge = invocableKnowledgeView((await options.knowledge?.()) ?? []);
      if (body === "" && knowledge.length === 0) return null;
      if (body !== "") await noteShown("summary", body, [{ kind: "summary", slug: "summary" }]);
      if (knowledge.length > 0)
        await noteShown(
          "knowledge",
          knowledge,
          knowledge.map((k) => ({ kind: "knowledge", slug: k.slug })),
        );
      return { summary: body === "" ? null : body, knowledge };
    },
    render: (data) =>
      [
        data.summary === null ? "" : prompts.render("resident_memory_section", { summary: data.summary }),
        data.knowledge.length === 0
          ? ""
          : prompts.render("memory_knowledge_section", { knowledge: data.knowledge }),
      ]
        .filter((part) => part !== "")
        .join("\n"),
  };
}
