import { describe, expect, it } from "vitest";
import { assertSegmentSound } from "../../../test-support/log-soundness.js";
import type { Entry } from "../src/entry/entry-schema.js";
import { replay } from "../src/replay/replay.js";
import { fixtureEntryTexts, fixtureNames, isFutureFixture } from "./helpers/fixture-states.js";

// The shared log-soundness check (test-support/log-soundness.ts, run by the pod, dispatch and CLI
// tests on every log they leave) holds on every frozen fixture, and catches each broken invariant.
const entriesOf = (name: string) => fixtureEntryTexts(name).map((text) => JSON.parse(text) as Entry);
const sound = (entries: readonly Entry[]) => () => assertSegmentSound("s", entries, { inFlight: null });

const APPROVALS = entriesOf("v3/approvals.jsonl");
const DISPATCHED = entriesOf("v3/dispatched.jsonl");
const WORKER = entriesOf("v3/tree-worker.jsonl");

/** `entries` with entry `index` replaced by `change(entry)` (or removed when it returns undefined). */
function edited(
  entries: readonly Entry[],
  index: number,
  change: (entry: Entry) => Entry | undefined,
): Entry[] {
  const copy = [...entries];
  const next = change(copy[index] as Entry);
  if (next === undefined) copy.splice(index, 1);
  else copy[index] = next;
  return copy;
}
const indexOf = (entries: readonly Entry[], match: (entry: Entry & Record<string, unknown>) => boolean) => {
  const index = entries.findIndex((entry) => match(entry as Entry & Record<string, unknown>));
  expect(index).toBeGreaterThan(-1);
  return index;
};
const runEvent = (event: string, runId?: string) => (entry: Entry & Record<string, unknown>) =>
  entry.kind === "extension" &&
  (entry.payload as { event?: string; run_id?: string }).event === event &&
  (runId === undefined || (entry.payload as { run_id?: string }).run_id === runId);

describe("the shared log-soundness check", () => {
  it("holds on every fixture of every format version that restores", () => {
    const checked = fixtureNames().filter((name) => !isFutureFixture(name));
    for (const name of checked) {
      const entries = entriesOf(name);
      const state = replay(entries);
      // A fixture frozen mid-turn (a crash) is the one thing a pod's own log never shows.
      if (state.inFlight !== null) continue;
      expect(() => assertSegmentSound(name, entries, state), name).not.toThrow();
    }
    expect(checked.length).toBeGreaterThanOrEqual(20);
  });

  it("catches an answer without a request, a second answer, and an answered delegated call", () => {
    expect(sound(APPROVALS)).not.toThrow();
    const request = indexOf(APPROVALS, (e) => e.kind === "approval_requested" && e.call_id === "toolu_02ls");
    expect(sound(edited(APPROVALS, request, () => undefined))).toThrow(
      /answer to toolu_02ls without a request/,
    );
    const answer = APPROVALS[indexOf(APPROVALS, (e) => e.kind === "approval_answered")] as Entry;
    expect(sound([...APPROVALS.slice(0, -1), answer, APPROVALS.at(-1) as Entry])).toThrow(/answered twice/);
    expect(
      sound([
        ...APPROVALS,
        { kind: "approval_answered", ts: 1, call_id: "toolu_05spawn", decision: "allow", by: "x" },
      ]),
    ).toThrow(/delegated call toolu_05spawn answered/);
  });

  it("catches awaiting_approval with nothing to wait for", () => {
    // The first run's end waits on toolu_01make; without its request there is nothing to wait on.
    const first = APPROVALS.slice(0, 8);
    expect(sound(first)).not.toThrow();
    const request = indexOf(first, (e) => e.kind === "approval_requested");
    expect(sound(edited(first, request, () => undefined))).toThrow(/awaiting_approval with no request/);
    // An answer from the run's own approver leaves nothing to wait for either.
    const answeredInRun = [
      ...first.slice(0, 6),
      { kind: "approval_answered", ts: 1, call_id: "toolu_01make", decision: "allow", by: "x", in_run: true },
      first[6] as Entry,
    ] as Entry[];
    expect(sound(answeredInRun)).toThrow(/awaiting_approval with no request/);
  });

  it("catches a child session that is its own parent, or at depth 0", () => {
    expect(sound(WORKER)).not.toThrow();
    const start = WORKER[0] as Entry & { kind: "segment_start" };
    const withParent = (parent: object) => [{ ...start, parent } as Entry, ...WORKER.slice(1)];
    expect(sound(withParent({ ...start.parent, session_id: start.session_id }))).toThrow(
      /not its own parent/,
    );
    expect(sound(withParent({ ...start.parent, depth: 0 }))).toThrow(/depth/);
  });

  it("catches a dispatch.run entry of the wrong shape, a run started before it was submitted, attempts out of order, two ends of one attempt", () => {
    expect(sound(DISPATCHED)).not.toThrow();
    const started = indexOf(DISPATCHED, runEvent("started"));
    const shape = edited(DISPATCHED, started, (entry) => ({
      ...entry,
      payload: { ...(entry as { payload: object }).payload, attempt: "one" },
    }));
    expect(sound(shape)).toThrow(/not a dispatch.run entry \(attempt\)/);
    const submitted = indexOf(DISPATCHED, runEvent("submitted"));
    expect(sound(edited(DISPATCHED, submitted, () => undefined))).toThrow(/begins with "started"/);
    const second = indexOf(
      DISPATCHED,
      (e) => runEvent("started")(e) && (e.payload as { attempt: number }).attempt === 2,
    );
    const backwards = edited(DISPATCHED, second, (entry) => ({
      ...entry,
      payload: { ...(entry as { payload: object }).payload, attempt: 1 },
    }));
    expect(sound(backwards)).toThrow(/attempt 1 after 1/);
    const ended = DISPATCHED.at(-1) as Entry;
    expect(sound([...DISPATCHED, ended])).toThrow(/ended twice/);
    // A fork carries only the latest run entry: there a run may begin anywhere.
    const start = DISPATCHED[0] as Entry & { kind: "segment_start" };
    const fork = [
      { ...start, forked_from: { segment_id: "g", at_turn: 1 } } as Entry,
      ...DISPATCHED.slice(3),
    ];
    expect(sound(fork)).not.toThrow();
  });
});
