import { describe, expect, it } from "vitest";
import type { Entry } from "../src/entry/entry-schema.js";
import { summarizeEntries } from "../src/read/session-summary.js";
import { fixtureEntryTexts } from "./helpers/fixture-states.js";

// An eval item (docs/evals.md) as the read model shows it: its `eval.origin` and `eval.score`
// entries, from the frozen v3 fixture, on the segment (`podkit session show`, `GET /sessions/:id`).

const entriesOf = (name: string) => fixtureEntryTexts(name).map((text) => JSON.parse(text) as Entry);

describe("the read model of an eval item", () => {
  it("gives the segment the item's origin and its scores, in log order", () => {
    const summary = summarizeEntries(entriesOf("v3/eval-item.jsonl"));
    expect(summary.eval).toEqual({
      origin: {
        sourceSession: "01a25e30-7c41-7d2a-9b3e-2f4a6c8d0e11",
        fromTurn: 1,
        toTurn: 1,
        evalId: "nightly-7",
        variant: {
          manifest: "variant.toml",
          model: "anthropic/claude-sonnet-4-5",
          pack: "packs/terse.toml",
          set: ["worker.max_turns=5"],
        },
      },
      scores: [
        { name: "answer", score: 1, pass: true, baselineScore: 1 },
        {
          name: "trajectory",
          score: 0.5,
          pass: false,
          baselineScore: 1,
          detail: "called [read_file], recorded [read_file, grep]",
        },
      ],
    });
    // The scores are not a turn's: the turn reads as it did.
    expect(summary.turns.map((t) => [t.turn, t.answer])).toEqual([[1, "It says readme."]]);
  });

  it("has no eval part for a session that is no eval item, and skips payloads of the wrong shape", () => {
    expect(summarizeEntries(entriesOf("v3/final-output.jsonl")).eval).toBeUndefined();
    const tampered = entriesOf("v3/eval-item.jsonl").map((entry) =>
      entry.kind === "extension" ? { ...entry, payload: { score: "high" } } : entry,
    );
    expect(summarizeEntries(tampered).eval).toEqual({ scores: [] });
  });
});
