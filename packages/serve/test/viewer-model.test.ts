import { describe, expect, it } from "vitest";
import { SessionModel } from "../src/viewer/session-model.js";

// The viewer's reading of the event stream (docs/serve.md, "Event stream"), without a browser.

const S = "seg-a";
const entry = (index: number, kind: string, extra: Record<string, unknown> = {}) => ({
  event: "entry",
  id: `${S}:${index}:abcdefgh`,
  data: JSON.stringify({ segment: S, index, entry: { kind, ts: index, ...extra } }),
});
const event = (name: string, data: unknown) => ({ event: name, id: undefined, data: JSON.stringify(data) });

describe("the viewer's session model", () => {
  it("shows the preview of a response only until that response (or the run's end) is in the log", () => {
    const model = new SessionModel();
    for (const [i, kind] of ["segment_start", "invoke", "user_input"].entries()) model.apply(entry(i, kind));
    model.apply(event("draft", { segment: S, after: 3, text: "Hel", reasoning: "" }));
    model.apply(event("delta", { segment: S, after: 3, kind: "text", text: "lo" }));
    expect(model.running).toBe(true);
    expect(model.visiblePreview?.text).toBe("Hello");
    model.apply(entry(3, "llm_usage"));
    expect(model.visiblePreview?.text).toBe("Hello"); // usage comes before the item
    model.apply(entry(4, "assistant_item", { item: { type: "message" } }));
    expect(model.visiblePreview).toBeUndefined();
    // A delta of another response does not extend this one.
    model.apply(event("delta", { segment: S, after: 9, kind: "text", text: "zzz" }));
    expect(model.preview?.text).toBe("Hello");
    model.apply(entry(5, "run_completed", { result: "finished", interrupted: false }));
    expect(model.running).toBe(false);
  });

  it("drops what a truncate or reset says is no longer the log's", () => {
    const model = new SessionModel();
    for (const [i, kind] of [
      "segment_start",
      "invoke",
      "user_input",
      "run_completed",
      "invoke",
      "user_input",
    ].entries())
      model.apply(entry(i, kind));
    model.apply(event("truncate", { segment: S, count: 4 }));
    expect(model.entries.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(model.lastId).toBe(model.entries[3]?.id);
    model.apply(event("reset", { segment: S }));
    expect(model.entries).toEqual([]);
    model.apply(entry(0, "segment_start"));
    model.apply(event("reset", { segment: null }));
    expect(model.entries).toEqual([]);
  });
});
