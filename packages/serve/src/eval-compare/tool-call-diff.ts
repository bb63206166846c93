import { diffArrays } from "diff";

/** A tool call as the comparison shows it: its name and its arguments as canonical JSON. */
export interface ComparedCall {
  readonly name: string;
  /** The arguments with object keys sorted at every level (the raw text when it is not JSON). */
  readonly arguments: string;
  /** The result's summary, shortened; null when the call got none. */
  readonly result: string | null;
  readonly isError: boolean;
}

/** How a call of the original turn fares in the item's: kept, dropped, new, or made with other arguments. */
export type CallChange =
  | {
      readonly change: "same";
      readonly name: string;
      readonly original: ComparedCall;
      readonly item: ComparedCall;
    }
  | {
      readonly change: "changed";
      readonly name: string;
      readonly original: ComparedCall;
      readonly item: ComparedCall;
    }
  | { readonly change: "removed"; readonly name: string; readonly original: ComparedCall }
  | { readonly change: "added"; readonly name: string; readonly item: ComparedCall };

/**
 * The tool calls of an original turn against the item's, in order: the longest common
 * subsequence of (name, canonical arguments) is `same`; between two of those, a dropped call and
 * a new call of the same tool pair up as `changed` (other arguments), and the rest are `removed`
 * and `added`.
 */
export function toolCallDiff(original: readonly ComparedCall[], item: readonly ComparedCall[]): CallChange[] {
  const changes: CallChange[] = [];
  let removed: ComparedCall[] = [];
  let added: ComparedCall[] = [];
  const flush = () => {
    const open = [...added];
    for (const call of removed) {
      const match = open.findIndex((candidate) => candidate.name === call.name);
      if (match < 0) {
        changes.push({ change: "removed", name: call.name, original: call });
        continue;
      }
      const [other] = open.splice(match, 1) as [ComparedCall];
      changes.push({ change: "changed", name: call.name, original: call, item: other });
    }
    for (const call of open) changes.push({ change: "added", name: call.name, item: call });
    removed = [];
    added = [];
  };
  const runs = diffArrays([...original], [...item], {
    comparator: (a, b) => a.name === b.name && a.arguments === b.arguments,
  });
  let itemIndex = 0;
  let originalIndex = 0;
  for (const run of runs) {
    if (run.removed) {
      removed.push(...run.value);
      originalIndex += run.value.length;
    } else if (run.added) {
      added.push(...run.value);
      itemIndex += run.value.length;
    } else {
      flush();
      // A common run: each side's own call (with its own result) at the same place.
      for (const call of run.value) {
        const mine = original[originalIndex] ?? call;
        changes.push({ change: "same", name: call.name, original: mine, item: item[itemIndex] ?? call });
        itemIndex += 1;
        originalIndex += 1;
      }
    }
  }
  flush();
  return changes;
}

/** JSON with object keys sorted at every level; text that is not JSON stays as it is. */
export function canonicalArguments(raw: string): string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw;
  }
  return JSON.stringify(value, (_key, member: unknown) => {
    if (member === null || typeof member !== "object" || Array.isArray(member)) return member;
    return Object.fromEntries(
      Object.keys(member)
        .sort()
        .map((key) => [key, (member as Record<string, unknown>)[key]]),
    );
  });
}
