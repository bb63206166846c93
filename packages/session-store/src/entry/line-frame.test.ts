import { randomBytes } from "node:crypto";
import { crc32 as zlibCrc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { crc32 } from "./crc32.js";
import {
  FrameBuffer,
  frameBodyEnd,
  frameInto,
  frameLine,
  frameParts,
  readFrame,
  unframeLine,
} from "./line-frame.js";

describe("v2 line frame", () => {
  it("computes zlib's CRC-32 for short and long ranges", () => {
    // Every length up to past the switch to zlib (each tail after the 8-byte steps), then longer ones.
    for (const size of [...Array.from({ length: 530 }, (_, i) => i), 1023, 1024, 5000]) {
      const bytes = randomBytes(size + 6);
      expect(crc32(bytes, 3, 3 + size)).toBe(zlibCrc32(bytes.subarray(3, 3 + size)));
    }
  });

  it("computes the same CRC-32 reading aligned words, from every start offset", () => {
    const into = new FrameBuffer();
    const bytes = into.ensure(600);
    randomBytes(600).copy(bytes);
    for (let start = 0; start < 8; start++) {
      for (const size of [0, 1, 7, 8, 9, 15, 16, 17, 100, 511]) {
        expect(crc32(bytes, start, start + size, into.words)).toBe(
          zlibCrc32(bytes.subarray(start, start + size)),
        );
      }
    }
  });

  it("appends seq and crc after the entry's own members and takes them off again", () => {
    const body = '{"kind":"user_input","ts":5,"text":"Grüße 😀"}';
    const line = frameLine(body, 12);
    expect(line).toMatch(/^\{"kind":"user_input","ts":5,"text":"Grüße 😀","seq":12,"crc":"[0-9a-f]{8}"\}$/);
    expect(JSON.parse(line)).toMatchObject({ seq: 12, text: "Grüße 😀" });
    const bytes = Buffer.from(line);
    expect(unframeLine(bytes, 0, bytes.length)).toEqual({ ok: true, body, seq: 12 });
  });

  it("frames several lines in one buffer exactly as frameLine does one by one", () => {
    const bodies = [
      '{"kind":"turn_end","ts":1,"turn":1}',
      `{"kind":"user_input","ts":2,"text":"${"日".repeat(600)}"}`,
    ];
    const into = new FrameBuffer();
    const length = frameInto(into, bodies, 7);
    const expected = `${frameLine(bodies[0] as string, 7)}\n${frameLine(bodies[1] as string, 8)}\n`;
    expect(into.bytes.toString("utf8", 0, length)).toBe(expected);
    // A long line serialized in parts frames to the same bytes.
    const body = bodies[1] as string;
    const parts = [body.slice(0, 7), body.slice(7, 300), body.slice(300)];
    expect(Buffer.concat([...frameParts(parts, 8)]).toString("utf8")).toBe(`${frameLine(body, 8)}\n`);
  });

  it("refuses an upper-case checksum, a leading zero in seq and a missing frame, even with a matching crc", () => {
    const frame = (covered: string, hex: (crc: number) => string) =>
      Buffer.from(`${covered},"crc":"${hex(zlibCrc32(covered))}"}`);
    const lower = (crc: number) => crc.toString(16).padStart(8, "0");
    // A body whose checksum has letters in it, so upper case really differs.
    let turn = 0;
    while (!/[a-f]/.test(lower(zlibCrc32(`{"kind":"turn_end","ts":1,"turn":${turn},"seq":3`)))) turn++;
    const covered = `{"kind":"turn_end","ts":1,"turn":${turn},"seq":3`;
    const good = frame(covered, lower);
    expect(unframeLine(good, 0, good.length)).toMatchObject({ ok: true, seq: 3 });
    const upper = frame(covered, (crc) => lower(crc).toUpperCase());
    expect(unframeLine(upper, 0, upper.length)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/lowercase/),
    });
    const zero = frame(`{"kind":"turn_end","ts":1,"turn":1,"seq":03`, lower);
    expect(unframeLine(zero, 0, zero.length)).toMatchObject({ ok: false, reason: 'malformed "seq" member' });
    const plain = Buffer.from('{"kind":"turn_end","ts":1,"turn":1}');
    expect(unframeLine(plain, 0, plain.length)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/no `"seq"`/),
    });
  });

  it("the read path's check accepts exactly the lines readFrame accepts at the expected seq, and says where the entry ends", () => {
    // What the reader expects of a line: readFrame's verdict and the sequence number it carries.
    const expected = (bytes: Buffer, seq: number) => {
      const frame = readFrame(bytes, 0, bytes.length);
      return frame.ok && frame.seq === seq ? frame.bodyEnd : -1;
    };
    const bodies = [
      '{"kind":"turn_end","ts":1,"turn":1}',
      '{"kind":"user_input","ts":5,"text":"Grüße 😀 \\u0000 \\"seq\\":1"}',
      `{"kind":"user_input","ts":2,"text":"${"日".repeat(300)}"}`,
    ];
    const into = new FrameBuffer();
    let checked = 0;
    for (const body of bodies) {
      for (const seq of [0, 1, 9, 10, 99, 100, 12345, 2 ** 40]) {
        const line = Buffer.from(frameLine(body, seq));
        const innerAt = Math.ceil(line.length / 8) * 8 + 8;
        const aligned = into.ensure(innerAt + line.length);
        line.copy(aligned);
        // As the reader views a buffer that starts 4-byte aligned but not at its memory's start.
        const inner = Buffer.from(aligned.buffer, aligned.byteOffset + innerAt, line.length);
        line.copy(inner);
        const innerWords = new Int32Array(inner.buffer, inner.byteOffset, inner.length >> 2);
        for (const [bytes, view] of [
          [line, undefined],
          [aligned.subarray(0, line.length), into.words],
          [inner, innerWords],
        ] as const) {
          expect(frameBodyEnd(bytes, 0, bytes.length, seq, view)).toBe(Buffer.byteLength(body) - 1);
          // At another sequence number it is refused (readFrame would give the seq it carries).
          for (const other of [seq + 1, seq === 0 ? 10 : seq - 1, seq * 10, Math.floor(seq / 10)]) {
            if (other === seq) continue;
            expect(frameBodyEnd(bytes, 0, bytes.length, other, view)).toBe(-1);
          }
        }
        // Every single-byte change of the frame and of the bytes next to it, and cuts of its end.
        for (let at = Math.max(0, line.length - 40); at < line.length; at++) {
          for (const value of [0x30, 0x31, 0x39, 0x2c, 0x22, 0x41, 0x61, 0x7d, (line[at] as number) ^ 1]) {
            const changed = Buffer.from(line);
            changed[at] = value;
            expect(frameBodyEnd(changed, 0, changed.length, seq)).toBe(expected(changed, seq));
            checked++;
          }
          expect(frameBodyEnd(line, 0, at, seq)).toBe(expected(line.subarray(0, at), seq));
        }
      }
    }
    expect(checked).toBeGreaterThan(5_000);
  });
});
