import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CorruptEntryError, InvalidEntryError, UnsupportedFormatError } from "../errors.js";
import { createEntryCodec } from "./entry-codec.js";
import { type Entry, MinimalItemSchema } from "./entry-schema.js";

const codec = createEntryCodec({ itemSchema: MinimalItemSchema });

describe("entry codec", () => {
  it("round-trips an item byte-identically, key order and provider metadata included", () => {
    // provider_metadata before type: a zod-rebuilt object would move `type` first.
    const line =
      '{"kind":"assistant_item","ts":5,"item":{"provider_metadata":{"openai":{"itemId":"rs_1",' +
      '"reasoningEncryptedContent":"gAAAAB=="}},"type":"reasoning","text":"ü \u2028 😀","extra":[1,2.5,null]}}';
    const entry = codec.decode(line, "f.jsonl", 1);
    expect(codec.encode(entry)).toBe(line);
  });

  it("keeps unknown fields of known entry kinds verbatim", () => {
    const line = '{"kind":"turn_end","ts":1,"turn":2,"note":"from a newer writer"}';
    expect(codec.encode(codec.decode(line, "f.jsonl", 1))).toBe(line);
  });

  it("refuses to encode an invalid entry and names the offending field", () => {
    const bad = { kind: "assistant_item", ts: 1, item: { text: "no type" } } as unknown as Entry;
    expect(() => codec.encode(bad)).toThrow(InvalidEntryError);
    expect(() => codec.encode(bad)).toThrow(/item\.type/);
  });

  it("reports a committed line that is not JSON as corruption with file and line", () => {
    const error = catchError(() => codec.decode('{"kind":"invoke"', "/s/seg.jsonl", 7));
    expect(CorruptEntryError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ file: "/s/seg.jsonl", line: 7 });
    expect((error as CorruptEntryError).reason).toMatch(/not valid JSON/);
    expect((error as Error).message).toMatch(/^\/s\/seg\.jsonl:7: /);
  });

  it("reports a wrong field type and an unknown value as corruption", () => {
    const error = catchError(() => codec.decode('{"kind":"turn_end","ts":1,"turn":"two"}', "f", 3));
    expect((error as CorruptEntryError).reason).toMatch(/"turn_end" entry: turn/);
    const status = '{"kind":"run_completed","ts":1,"result":"vanished","interrupted":false}';
    expect(CorruptEntryError.isInstance(catchError(() => codec.decode(status, "f", 4)))).toBe(true);
  });

  it("reports an intact line of a kind it does not know as written by a newer podkit, not as corruption", () => {
    const error = catchError(() => codec.decode('{"kind":"teleport","ts":1}', "f", 2));
    expect(UnsupportedFormatError.isInstance(error)).toBe(true);
    expect(CorruptEntryError.isInstance(error)).toBe(false);
    expect(error).toMatchObject({ file: "f", line: 2, kind: "teleport", version: undefined });
    expect((error as Error).message).toBe(
      'f:2: this session log was written by a newer podkit: entry kind "teleport" is not in format 3, ' +
        "the newest this @podkit/session-store reads. Upgrade podkit to read it.",
    );
    // A line that is not an entry at all stays corruption, whatever its kind says.
    expect(CorruptEntryError.isInstance(catchError(() => codec.decode('{"kind":7,"ts":1}', "f", 3)))).toBe(
      true,
    );
  });

  it("reports an empty line and a non-object line as corruption", () => {
    expect(catchError(() => codec.decode("", "f", 4))).toMatchObject({ line: 4, reason: "empty line" });
    expect(catchError(() => codec.decode("[1]", "f", 5))).toMatchObject({
      line: 5,
      reason: "not a JSON object",
    });
  });

  it("rejects a segment from a newer format version with an upgrade hint", () => {
    const line = '{"kind":"segment_start","ts":1,"v":4,"session_id":"s","segment_id":"g"}';
    const error = catchError(() => codec.decode(line, "f", 1));
    expect(UnsupportedFormatError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ version: 4, kind: undefined });
    expect((error as Error).message).toBe(
      "f:1: this session log was written by a newer podkit (format 4); this @podkit/session-store reads " +
        "formats 1 to 3. Upgrade podkit to read it.",
    );
    expect((error as UnsupportedFormatError).hint).toMatch(/upgrade @podkit\/cli/);
  });

  it("validates items with a schema passed in", () => {
    const strict = createEntryCodec({
      itemSchema: z.object({ type: z.literal("message"), role: z.string() }),
    });
    expect(() => strict.decode('{"kind":"tool_result","ts":1,"item":{"type":"message"}}', "f", 9)).toThrow(
      /f:9: .*item\.role/,
    );
    const entry = strict.decode(
      '{"kind":"tool_result","ts":1,"item":{"type":"message","role":"user"}}',
      "f",
      9,
    );
    expect(entry).toEqual({ kind: "tool_result", ts: 1, item: { type: "message", role: "user" } });
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
