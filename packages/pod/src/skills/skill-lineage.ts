import type { Item } from "@podkit/llm-worker";
import { CorruptEntryError, type SessionLog, type Store } from "@podkit/session-store";
import { SKILLS_KNOWN_DOMAIN, type SkillsKnown, skillsKnownSchema } from "./skill-records.js";

/**
 * The latest `skills.known` of the segments a compacted head was cut from, following
 * `compacted_from` back until one holds it. A compaction writes it into its new segment right
 * after creating it; a process that died between the two leaves a head without it, and the
 * session must still offer the `skill` tool it had (the tool list is part of the cached prefix).
 * Everything read is untrusted: a payload of another shape counts as none, a lineage that loops
 * ends the search, a damaged line ends that segment's read (the restore reports it).
 */
export async function knownInLineage(
  store: Store<Item>,
  log: SessionLog<Item>,
): Promise<SkillsKnown | undefined> {
  const { sessionId } = log.state;
  let segmentId = log.state.lineage.compactedFrom?.segmentId;
  const seen = new Set<string>([log.state.segmentId]);
  while (segmentId !== undefined && !seen.has(segmentId)) {
    seen.add(segmentId);
    let found: SkillsKnown | undefined;
    let previous: string | undefined;
    try {
      for await (const entry of store.readAll({ sessionId, segmentId })) {
        if (entry.kind === "segment_start") previous = entry.compacted_from?.segment_id;
        if (entry.kind !== "extension" || entry.domain !== SKILLS_KNOWN_DOMAIN) continue;
        const parsed = skillsKnownSchema.safeParse(entry.payload);
        if (parsed.success) found = parsed.data;
      }
    } catch (error) {
      if (!CorruptEntryError.isInstance(error)) throw error;
    }
    if (found !== undefined) return found;
    segmentId = previous;
  }
  return undefined;
}
