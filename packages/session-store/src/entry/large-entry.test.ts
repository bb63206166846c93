import { describe, expect, it } from "vitest";
import { z } from "zod";
import { mulberry32 } from "../../test/helpers/seeded-random.js";
import { CorruptEntryError, InvalidEntryError } from "../errors.js";
import { createEntryCodec } from "./entry-codec.js";
import type { Entry } from "./entry-schema.js";
import { parseWithHistory, SlicedParseError, splitHistory, stringifyWithHistory } from "./large-entry.js";
import type { Pause } from "./time-slice.js";

/** Yields to the event loop on every call, so slicing is exercised at every step. */
const always: Pause = () => new Promise((resolve) => setImmediate(resolve));

const TRICKY = ['"', "\\", "]", "[", "}", "{", ",", ":", "history", "\u2028", "😀", "é", "\u0000", '\\"]'];

/** A random JSON value, biased towards strings that look like structure. */
function jsonValue(random: () => number, depth = 0): unknown {
  const pick = random();
  if (depth > 3 || pick < 0.3) {
    const parts = Array.from(
      { length: Math.floor(random() * 4) },
      () => TRICKY[Math.floor(random() * TRICKY.length)],
    );
    return parts.join("");
  }
  if (pick < 0.4) return Math.floor(random() * 1e6) / (random() < 0.5 ? 1 : 7);
  if (pick < 0.45) return random() < 0.5;
  if (pick < 0.5) return null;
  if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => jsonValue(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--)
    object[jsonValue(random, 9) as string] = jsonValue(random, depth + 1);
  return object;
}

function segmentStart(history: unknown[], random: () => number): Record<string, unknown> {
  return {
    kind: "segment_start",
    ts: 1,
    v: 2,
    session_id: "s",
    segment_id: "g",
    system_prompt: 'says "history":[] here',
    config: { history: [1, 2], max_tokens: 5, nested: jsonValue(random) },
    history,
    forked_from: { segment_id: "f", at_turn: 1 },
  };
}

describe("long lines serialized and parsed in slices", () => {
  it("gives exactly JSON.stringify's text and JSON.parse's object, key order included (300 random lines)", async () => {
    const random = mulberry32(424_242);
    for (let round = 0; round < 300; round++) {
      const history = Array.from({ length: Math.floor(random() * 6) }, () => ({
        type: "message",
        ...(jsonValue(random) as object),
      }));
      const entry = segmentStart(history, random);
      const text = JSON.stringify(entry);
      expect((await stringifyWithHistory(entry as { history: unknown[] }, always)).join("")).toBe(text);
      const bytes = Buffer.from(text);
      const parsed = await parseWithHistory(bytes, 0, bytes.length, "", always);
      expect(JSON.stringify(parsed)).toBe(text);
      expect(parsed).toEqual(JSON.parse(text));
      // Without its closing brace, closed again by `tail` (as a v2 frame leaves it).
      const open = await parseWithHistory(bytes, 0, bytes.length - 1, "}", always);
      expect(JSON.stringify(open)).toBe(text);
    }
  });

  it("reads hand-written JSON (spaces, duplicate or escaped keys, other shapes) exactly as JSON.parse does", async () => {
    const lines = [
      ' { "kind" : "segment_start" , "history" : [ {"a": [1, {"b": "]"}]} , "x" , [] ] , "z" : 1 } ',
      '{"history":5,"history":[{"type":"m"}]}',
      '{"history":[{"type":"m"}],"history":[]}',
      '{"hist\\u006fry":[1],"history":[2]}',
      '{"history":{"0":1}}',
      '{"history":[]}',
      '{"other":[1,2,3]}',
      '{"history":"[1,2]"}',
    ];
    for (const line of lines) {
      const bytes = Buffer.from(line);
      expect(await parseWithHistory(bytes, 0, bytes.length, "", always), line).toEqual(JSON.parse(line));
    }
    // The plain shapes are split (a duplicate key before the array too: the array is the last);
    // a key after it, an escaped key or another type are left to one JSON.parse.
    expect(
      await splitHistory(Buffer.from(lines[0] as string), 0, (lines[0] as string).length, always),
    ).not.toBeNull();
    for (const line of lines.slice(2, 5)) {
      expect(await splitHistory(Buffer.from(line), 0, line.length, always), line).toBeNull();
    }
  });

  it("refuses text that is not JSON, wherever the damage is", async () => {
    for (const line of [
      '{"history":[{"a":1},]}',
      '{"history":[{"a":1} {"b":2}]}',
      '{"history":[,{"a":1}]}',
      '{"history":[{"a":1}],}',
      '{"history":[{"a":1}]',
      '{"history":[{"a":"1}]}',
      '{"history":[{"a":1}]} x',
    ]) {
      const bytes = Buffer.from(line);
      await expect(parseWithHistory(bytes, 0, bytes.length, "", always), line).rejects.toBeInstanceOf(
        SlicedParseError,
      );
    }
  });

  it("the codec encodes and decodes a long history in slices as it does in one piece, and names a bad item", async () => {
    const codec = createEntryCodec<unknown>({
      itemSchema: z.object({ type: z.literal("message"), text: z.string() }),
      configSchema: z.object({ max_tokens: z.number().int().positive() }).loose(),
    });
    const history = Array.from({ length: 3_000 }, (_, i) => ({
      type: "message",
      text: `item ${i} ${"ü".repeat(200)}`,
    }));
    const entry = {
      ...segmentStart(history, mulberry32(1)),
      config: { max_tokens: 5 },
    } as unknown as Entry<unknown>;
    const text = codec.encode(entry);
    expect((await codec.encodeSliced(entry, always)).join("")).toBe(text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(1 << 20);
    expect(await codec.decodeSliced(text, "f", 1, always)).toEqual(codec.decode(text, "f", 1));

    const bad = structuredClone(entry) as { history: Record<string, unknown>[] };
    (bad.history[2_500] as Record<string, unknown>).text = 7;
    const refusal = await codec
      .encodeSliced(bad as unknown as Entry<unknown>, always)
      .catch((e: unknown) => e);
    expect(InvalidEntryError.isInstance(refusal)).toBe(true);
    expect((refusal as Error).message).toMatch(/history\.2500\.text/);
    const corrupt = await codec.decodeSliced(JSON.stringify(bad), "f", 1, always).catch((e: unknown) => e);
    expect(CorruptEntryError.isInstance(corrupt)).toBe(true);
    expect(corrupt).toMatchObject({
      file: "f",
      line: 1,
      reason: expect.stringMatching(/history\.2500\.text/),
    });
    const config = { ...(entry as object), config: { max_tokens: "lots" } };
    const wrongConfig = await codec
      .decodeSliced(JSON.stringify(config), "f", 1, always)
      .catch((e: unknown) => e);
    expect(wrongConfig).toMatchObject({ reason: expect.stringMatching(/config\.max_tokens/) });
  });
});
