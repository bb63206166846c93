import { describe, expect, it } from "vitest";
import { startProgress } from "./progress.js";

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, out: { isTTY, write: (text: string) => writes.push(text) } };
}

describe("startProgress", () => {
  it("in a terminal: one live line with the elapsed time, rewritten in place, then the outcome", async () => {
    let now = 1_000;
    const { writes, out } = sink(true);
    const progress = startProgress(out, "consolidating memory", () => now);
    now = 1_250;
    await new Promise((resolve) => setTimeout(resolve, 230));
    now = 4_100;
    progress.done("3 record(s) written");
    expect(writes[0]).toBe("\r\u001b[2K\u001b[2mconsolidating memory… 0.0s\u001b[22m");
    expect(writes.slice(1, -1).length).toBeGreaterThanOrEqual(1);
    expect(
      writes
        .slice(1, -1)
        .every((w) => w.startsWith("\r\u001b[2K") && w.includes("consolidating memory… 0.3s")),
    ).toBe(true);
    expect(writes.at(-1)).toBe(
      "\r\u001b[2K\u001b[32m✓\u001b[39m consolidating memory: 3 record(s) written (3.1s)\n",
    );
    const count = writes.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(writes).toHaveLength(count);
  });

  it("without a terminal: a start line and a done or failed line, no control codes", () => {
    let now = 0;
    const { writes, out } = sink(false);
    startProgress(out, "compacting the context", () => now);
    now = 1_500;
    const failing = startProgress(out, "extracting memory", () => now);
    now = 2_000;
    failing.failed("the model refused");
    expect(writes).toEqual([
      "compacting the context…\n",
      "extracting memory…\n",
      "extracting memory failed: the model refused (0.5s)\n",
    ]);
  });
});
