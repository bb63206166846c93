import { diffWords } from "diff";

/** One run of an answer diff: text both answers share, or only the original's, or only the item's. */
export interface DiffPart {
  readonly op: "same" | "removed" | "added";
  readonly text: string;
}

/** The most edits (in words) a diff looks for before it gives up: beyond it, the answers are simply different. */
const MAX_EDIT_WORDS = 4_000;
/** The most time one diff may take (in slices, so other requests go on meanwhile). */
const DIFF_TIMEOUT_MS = 200;

const WORDS = new Intl.Segmenter(undefined, { granularity: "word" });

/**
 * The word diff of the original answer and the item's (jsdiff's `diffWords`, with the runtime's
 * word segmenter so text without spaces — Japanese, Chinese — is diffed by word too). Computed in
 * async mode, bounded in edits and time: two answers too different to diff in time come back as
 * the whole original removed and the whole item's answer added.
 */
export function answerDiff(original: string, item: string): Promise<DiffPart[]> {
  if (original === item) return Promise.resolve(original === "" ? [] : [{ op: "same", text: original }]);
  return new Promise((resolve) => {
    diffWords(original, item, {
      intlSegmenter: WORDS,
      maxEditLength: MAX_EDIT_WORDS,
      timeout: DIFF_TIMEOUT_MS,
      callback: (changes) => {
        if (changes === undefined) {
          resolve([
            ...(original === "" ? [] : [{ op: "removed" as const, text: original }]),
            ...(item === "" ? [] : [{ op: "added" as const, text: item }]),
          ]);
          return;
        }
        resolve(
          changes
            .filter((change) => change.value !== "")
            .map((change) => ({
              op: change.added ? "added" : change.removed ? "removed" : "same",
              text: change.value,
            })),
        );
      },
    });
  });
}
