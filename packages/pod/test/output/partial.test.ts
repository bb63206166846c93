import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type OutputSchema, toOutputSchema } from "../../src/output/output-schema.js";
import { PartialOutputTracker, type PartialOutputUpdate } from "../../src/output/partial.js";

const review = toOutputSchema(
  z.object({
    verdict: z.enum(["approve", "reject"]),
    findings: z.array(z.object({ line: z.number().int(), note: z.string() })),
    tags: z.array(z.string()).optional(),
    meta: z.object({ nested: z.array(z.number()) }).optional(),
  }),
);

const FINAL = {
  verdict: "reject",
  findings: [
    { line: 12, note: 'a "quoted" note, with [brackets], {braces} and \\ a backslash' },
    { line: 40, note: "second" },
  ],
  tags: ["x,y", "z]"],
  meta: { nested: [1, 2] },
};

/** Feeds `text` in chunks of `size` characters and collects the updates, in order. */
async function stream(
  text: string,
  size: number,
  schema: OutputSchema<unknown> = review,
): Promise<PartialOutputUpdate[]> {
  const tracker = new PartialOutputTracker(schema);
  const updates: PartialOutputUpdate[] = [];
  for (let at = 0; at < text.length; at += size) {
    const update = await tracker.push(text.slice(at, at + size));
    if (update) updates.push(update);
  }
  return updates;
}

const partials = (updates: PartialOutputUpdate[]) => updates.flatMap((u) => (u.partial ? [u.partial] : []));
const elements = (updates: PartialOutputUpdate[]) => updates.flatMap((u) => u.elements);

describe("PartialOutputTracker", () => {
  it.each([1, 3, 17])(
    "streams changing partial objects whose last equals the answer (chunks of %i)",
    async (size) => {
      const text = JSON.stringify(FINAL, null, 2);
      const updates = await stream(text, size);
      const seen = partials(updates);
      expect(seen.at(-1)).toEqual(FINAL);
      for (let i = 1; i < seen.length; i++) expect(seen[i]).not.toEqual(seen[i - 1]); // only when changed
      expect(seen.length).toBeGreaterThan(3);
    },
  );

  it.each([1, 5])(
    "reports each top-level array element once, complete and checked (chunks of %i)",
    async (size) => {
      const updates = await stream(JSON.stringify(FINAL), size);
      expect(elements(updates)).toEqual([
        { property: "findings", index: 0, value: FINAL.findings[0], valid: true, issues: [] },
        { property: "findings", index: 1, value: FINAL.findings[1], valid: true, issues: [] },
        { property: "tags", index: 0, value: "x,y", valid: true, issues: [] },
        { property: "tags", index: 1, value: "z]", valid: true, issues: [] },
      ]); // meta.nested is not top-level: never reported
    },
  );

  it("reports a number only once it is complete, not while its digits arrive", async () => {
    const tracker = new PartialOutputTracker(review);
    const first = await tracker.push('{"findings": [{"line": 1');
    expect(first?.elements).toEqual([]);
    expect(first?.partial).toEqual({ findings: [{ line: 1 }] }); // the parser's guess, shown as partial only
    const second = await tracker.push('2, "note": "n"}');
    expect(second?.elements).toEqual([]);
    const closed = await tracker.push(", ");
    expect(closed?.elements).toEqual([
      { property: "findings", index: 0, value: { line: 12, note: "n" }, valid: true, issues: [] },
    ]);
  });

  it("reports an element that breaks the item schema as invalid, with its issues", async () => {
    const updates = await stream('{"findings": [{"line": 1.5, "note": "n"}], "verdict": "approve"}', 4);
    expect(elements(updates)).toEqual([
      {
        property: "findings",
        index: 0,
        value: { line: 1.5, note: "n" },
        valid: false,
        issues: [{ path: "/line", message: "Invalid input: expected int, received number" }],
      },
    ]);
  });

  it("checks elements against a JSON Schema's items too, and skips arrays the schema does not declare", async () => {
    const schema = toOutputSchema({
      type: "object",
      properties: { items: { type: "array", items: { type: "integer" } } },
    });
    const updates = await stream('{"extra": [1, 2], "items": [1, "two", 3]}', 2, schema);
    expect(elements(updates).map(({ property, index, valid }) => [property, index, valid])).toEqual([
      ["items", 0, true],
      ["items", 1, false],
      ["items", 2, true],
    ]);
  });

  it("keeps the order of updates when chunks are pushed without waiting", async () => {
    const tracker = new PartialOutputTracker(review);
    const text = JSON.stringify(FINAL);
    const pending = [...text].map((char) => tracker.push(char));
    const updates = (await Promise.all(pending)).filter((u): u is PartialOutputUpdate => u !== undefined);
    expect(partials(updates).at(-1)).toEqual(FINAL);
    expect(elements(updates).map((e) => `${e.property}[${e.index}]`)).toEqual([
      "findings[0]",
      "findings[1]",
      "tags[0]",
      "tags[1]",
    ]);
    expect(tracker.received).toBe(text);
  });

  it("reports nothing for text whose root is not an object", async () => {
    expect(await stream("[1, 2, 3]", 2)).toEqual([]);
    expect(await stream("just prose", 3)).toEqual([]);
  });
});
