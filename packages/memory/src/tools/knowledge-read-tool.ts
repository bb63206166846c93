import { defineTool, type Tool } from "@podkit/llm-worker";
import { z } from "zod";
import { MemoryError } from "../errors.js";
import type { ParsedRecord } from "../lint/lint-record.js";
import { memoryPaths, recordLabel } from "../records/layout.js";
import { formatTimestamp } from "../records/record-schema.js";
import { appendUsage } from "../store/usage-log.js";

/**
 * `knowledge_read {slug}`: the body of a knowledge entry the memory section offers (one with
 * `model_invocation: true`); other entries are not offered and not read. Each read is recorded
 * as `used`, so entries the model relies on are protected from tidying away.
 */
export function knowledgeReadTool(
  workspace: string,
  invocable: () => Promise<readonly ParsedRecord[]>,
  clock: () => Date = () => new Date(),
): Tool {
  const paths = memoryPaths(workspace);
  return defineTool({
    name: "knowledge_read",
    description:
      "Read a knowledge entry listed in the memory context (by its slug): facts, rules and know-how of this project kept from earlier sessions.",
    inputSchema: z.strictObject({
      slug: z.string().describe("The entry's slug, as the memory context lists it"),
    }),
    execute: async (args) => {
      let entries: readonly ParsedRecord[];
      try {
        entries = await invocable();
      } catch (error) {
        const message = MemoryError.isInstance(error)
          ? error.message
          : String((error as Error)?.message ?? error);
        return { summary: `knowledge_read failed: ${message.split("\n")[0]}`, is_error: true };
      }
      const entry = entries.find((e) => e.slug === args.slug);
      if (entry === undefined) {
        const offered = entries.map((e) => e.slug).join(", ");
        return {
          summary: `no knowledge entry "${args.slug}" is offered; the entries you can read are listed in the memory context${offered === "" ? "" : ` (${offered})`}`,
          is_error: true,
        };
      }
      await appendUsage(paths, {
        ts: formatTimestamp(clock()),
        event: "used",
        kind: "knowledge",
        slug: entry.slug,
        by: "pod",
      }).catch(() => undefined);
      return {
        summary: `${recordLabel("knowledge", entry.slug)}: ${String(entry.frontmatter.description ?? "")}`,
        content: entry.body,
      };
    },
  });
}
