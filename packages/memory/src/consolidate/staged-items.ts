import type { StagingEntry } from "../extract/extract-schema.js";
import type { Source } from "../records/record-schema.js";
import type { Provenance } from "../store/provenance.js";

/** The four item lists of a staging entry, and the letter their ids use. */
const FIELDS = [
  ["decisions", "decision", "d"],
  ["discussions", "discussion", "q"],
  ["attempts", "attempt", "a"],
  ["requests", "request", "r"],
] as const;

export type StagedField = (typeof FIELDS)[number][0];
export type StagedKind = (typeof FIELDS)[number][1];

/**
 * One extracted item of the consumed staging, with the id the consolidation worker refers to it
 * by (`s2-d1`: the first decision of the second staging entry) and the source code attaches.
 */
export interface StagedItem {
  readonly id: string;
  readonly kind: StagedKind;
  readonly field: StagedField;
  readonly topic: string;
  /** The item's own fields (`decision`, `reason`; `summary`, `settled`; `tried`, `observed`; `request`). */
  readonly fields: Readonly<Record<string, string | boolean>>;
  readonly sessionId: string;
  readonly entryId: string;
  readonly source: Source;
}

/** The staged items of `entries` (in staging order), each with its run-local id. */
export function stagedItems(entries: readonly StagingEntry[]): StagedItem[] {
  return entries.flatMap((entry, e) =>
    FIELDS.flatMap(([field, kind, letter]) =>
      entry[field].map((item, i) => {
        const { topic, ...fields } = item as { topic: string } & Record<string, string | boolean>;
        return {
          id: `s${e + 1}-${letter}${i + 1}`,
          kind,
          field,
          topic,
          fields,
          sessionId: entry.session_id,
          entryId: entry.id,
          source: entry.source,
        };
      }),
    ),
  );
}

/** The provenance of a run: every staged item's source, and which items the candidate report lists. */
export function provenanceOf(items: readonly StagedItem[], candidateItemIds: Iterable<string>): Provenance {
  return {
    items: new Map(items.map((item) => [item.id, { source: item.source }])),
    candidates: new Set(candidateItemIds),
  };
}
