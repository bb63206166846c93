import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Entry } from "../src/entry/entry-schema.js";
import { CorruptEntryError, UnsupportedFormatError } from "../src/errors.js";
import { FsStore } from "../src/fs/fs-store.js";
import { newId } from "../src/ids.js";
import type { SegmentRef } from "../src/store/store.js";
import { useTempDirs } from "./helpers/temp-dir.js";

const tempDir = useTempDirs();

const ENTRIES: Entry[] = [
  { kind: "invoke", ts: 2, trigger: "user" },
  { kind: "user_input", ts: 3, text: "Grüße — 日本 😀" },
  {
    kind: "assistant_item",
    ts: 4,
    item: { type: "reasoning", text: "ok", provider_metadata: { anthropic: { signature: "c2ln" } } },
  },
  { kind: "turn_end", ts: 5, turn: 1 },
];

/** A segment written by FsStore in format `v`, and how to read it back as plain data. */
async function segment(v: 1 | 2) {
  const root = await tempDir();
  const store = new FsStore({ root });
  const ref: SegmentRef = { sessionId: newId(), segmentId: newId() };
  await store.createSegment(ref, [
    {
      kind: "segment_start",
      ts: 1,
      v,
      session_id: ref.sessionId,
      segment_id: ref.segmentId,
      system_prompt: "p",
      config: {},
      history: [],
    },
    ...ENTRIES,
  ]);
  await store.close();
  const path = store.segmentPath(ref);
  const read = async (): Promise<Entry[]> => {
    const out: Entry[] = [];
    for await (const entry of new FsStore({ root }).readAll(ref)) out.push(entry);
    return out;
  };
  return { path, read, bytes: await readFile(path) };
}

/** Reads, returning the entries or the error. */
async function outcome(read: () => Promise<Entry[]>): Promise<Entry[] | unknown> {
  try {
    return await read();
  } catch (error) {
    return error;
  }
}

/** Flips per byte: the lowest, a middle and the highest bit, and all eight at once. */
const MASKS = [0x01, 0x10, 0x80, 0xff];

function lines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, start)) {
    out.push(bytes.subarray(start, at + 1));
    start = at + 1;
  }
  return out;
}

describe("verifiable lines (format v2)", () => {
  it("a duplicated line is corruption naming file and line; in v1 it restored twice", async () => {
    for (const v of [1, 2] as const) {
      const { path, read, bytes } = await segment(v);
      const [first, second, third, ...rest] = lines(bytes);
      await writeFile(path, Buffer.concat([first, second, third, third, ...rest] as Buffer[]));
      const result = await outcome(read);
      if (v === 1) {
        expect((result as Entry[]).filter((e) => e.kind === "user_input")).toHaveLength(2); // the silent damage
      } else {
        expect(CorruptEntryError.isInstance(result)).toBe(true);
        expect(result).toMatchObject({ file: path, line: 4 });
        expect((result as Error).message).toMatch(/sequence number 2 where 3 belongs/);
      }
    }
  });

  it("reordered lines are corruption; in v1 they restored in the wrong order", async () => {
    for (const v of [1, 2] as const) {
      const { path, read, bytes } = await segment(v);
      const [first, second, third, ...rest] = lines(bytes);
      await writeFile(path, Buffer.concat([first, third, second, ...rest] as Buffer[]));
      const result = await outcome(read);
      if (v === 1) expect((result as Entry[])[1]?.kind).toBe("user_input");
      else expect(result).toMatchObject({ name: "CorruptEntryError", file: path, line: 2 });
    }
  });

  it("a committed line holding invalid UTF-8 is corruption in every format, never U+FFFD", async () => {
    for (const v of [1, 2] as const) {
      const { path, read, bytes } = await segment(v);
      const at = bytes.indexOf(Buffer.from("日"));
      const damaged = Buffer.from(bytes);
      damaged[at] = 0xff; // not a UTF-8 byte anywhere
      // Positive control: a plain decode turns it into U+FFFD and parses fine.
      expect(JSON.parse(damaged.toString("utf8").split("\n")[2] as string).text).toContain("\uFFFD");
      await writeFile(path, damaged);
      const result = await outcome(read);
      expect(CorruptEntryError.isInstance(result), `v${v}`).toBe(true);
      expect(result).toMatchObject({ file: path, line: 3 });
      expect((result as CorruptEntryError).reason).toMatch(/invalid UTF-8/);
    }
  });

  it("a flipped byte that still parses is corruption in v2; in v1 it changed the entry silently", async () => {
    for (const v of [1, 2] as const) {
      const { path, read, bytes } = await segment(v);
      const damaged = Buffer.from(bytes);
      damaged[damaged.indexOf(Buffer.from('"turn":1')) + 7] = 0x37; // turn 1 → turn 7
      await writeFile(path, damaged);
      const result = await outcome(read);
      if (v === 1) expect((result as Entry[]).at(-1)).toMatchObject({ kind: "turn_end", turn: 7 });
      else
        expect(result).toMatchObject({
          name: "CorruptEntryError",
          line: 5,
          reason: expect.stringMatching(/checksum mismatch/),
        });
    }
  });

  it("every single-byte flip of a v2 segment is a typed error naming its line, or provably harmless", {
    timeout: 120_000,
  }, async () => {
    const { path, read, bytes } = await segment(2);
    const original = await read();
    const lineOf: number[] = [];
    let line = 1;
    for (const byte of bytes) {
      lineOf.push(line);
      if (byte === 0x0a) line++;
    }
    const harmless: number[] = [];
    let errors = 0;
    for (let position = 0; position < bytes.length; position++) {
      for (const mask of MASKS) {
        const damaged = Buffer.from(bytes);
        damaged[position] = (damaged[position] as number) ^ mask;
        await writeFile(path, damaged);
        const result = await outcome(read);
        if (Array.isArray(result)) {
          // Only one flip may read without an error: the final newline. The last line then has
          // no commit marker — exactly a crash before that append — and the rest reads intact.
          expect(position, `flip ${mask} at ${position} read silently`).toBe(bytes.length - 1);
          expect(result).toEqual(original.slice(0, -1));
          harmless.push(position);
          continue;
        }
        expect(
          CorruptEntryError.isInstance(result) || UnsupportedFormatError.isInstance(result),
          `flip ${mask} at ${position}: ${String(result)}`,
        ).toBe(true);
        expect(result, `flip ${mask} at ${position}`).toMatchObject({ file: path, line: lineOf[position] });
        errors++;
      }
    }
    expect(new Set(harmless)).toEqual(new Set([bytes.length - 1]));
    expect(errors).toBe(bytes.length * MASKS.length - harmless.length);
  });

  it("positive control: the same sweep over a v1 segment finds flips that change entries silently", async () => {
    const { path, read, bytes } = await segment(1);
    const original = JSON.stringify(await read());
    let silent = 0;
    for (let position = 0; position < bytes.length - 1; position++) {
      const damaged = Buffer.from(bytes);
      damaged[position] = (damaged[position] as number) ^ 0x01;
      await writeFile(path, damaged);
      const result = await outcome(read);
      if (Array.isArray(result) && JSON.stringify(result) !== original) silent++;
    }
    expect(silent).toBeGreaterThan(10);
  });
});
