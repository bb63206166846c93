import type { EvalItemResult } from "@podkit/pod";
import { describe, expect, it } from "vitest";
import { evalProgress } from "../src/eval/eval-progress.js";

// `podkit eval`'s progress on stderr: one line redrawn in place on a terminal, one plain line per
// item anywhere else.

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, out: { isTTY, write: (text: string) => writes.push(text) } };
}

function result(caseName: string, extra: Partial<EvalItemResult> = {}): EvalItemResult {
  return { caseName, pass: true, resumed: false, divergences: [], ...extra } as unknown as EvalItemResult;
}

const CLEAR = "\r\u001b[2K";

describe("eval progress", () => {
  it("on a terminal: one line redrawn in place, with items done, divergences, failures and the time left", () => {
    let now = 0;
    const { writes, out } = sink(true);
    const progress = evalProgress(out, 4, () => now);
    expect(writes).toEqual([`${CLEAR}eval ░░░░░░░░░░░░░░░░░░░░ 0/4 items, 0 divergences, ETA … (0s)`]);
    // A finished item found on disk costs nothing: the time left is read off the items run.
    progress.item(result("a", { resumed: true }), 1, 4);
    now = 10_000;
    progress.item(
      result("b", { pass: false, divergences: [{ turn: 1, tool: "grep", arguments: "{}" }] }),
      2,
      4,
    );
    expect(writes.at(-1)).toBe(
      `${CLEAR}eval ██████████░░░░░░░░░░ 2/4 items, 1 divergence, \u001b[31m1 failed\u001b[39m, ETA 20s (10s)`,
    );
    now = 95_000;
    progress.item(result("c"), 3, 4);
    progress.item(result("d"), 4, 4);
    progress.finish();
    progress.finish();
    expect(writes.slice(0, -1).every((w) => w.startsWith(CLEAR) && !w.includes("\n"))).toBe(true);
    expect(writes.at(-1)).toBe(
      `${CLEAR}eval ████████████████████ 4/4 items, 1 divergence, \u001b[31m1 failed\u001b[39m (1m35s)\n`,
    );
    expect(writes.filter((w) => w.endsWith("\n"))).toHaveLength(1);
  });

  it("anywhere else: one plain line per item, no control codes", () => {
    const { writes, out } = sink(false);
    const progress = evalProgress(out, 3, () => 0);
    progress.item(result("01a2:1-2"), 1, 3);
    progress.item(
      result("input #2", { pass: false, divergences: [{ turn: 1, tool: "x", arguments: "{}" }] }),
      2,
      3,
    );
    progress.item(result("s3", { resumed: true }), 3, 3);
    progress.finish();
    expect(writes).toEqual([
      "[1/3] 01a2:1-2 pass\n",
      "[2/3] input #2 FAIL (1 divergence)\n",
      "[3/3] s3 pass (finished before)\n",
    ]);
  });
});
