/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character and appends a
 * notice saying how much was dropped, so the model knows the output is incomplete. Text within
 * the cap is returned unchanged.
 */
export function capToolOutput(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const buf = Buffer.from(text, "utf8");
  let end = Math.max(0, maxBytes);
  // Back up over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  const kept = buf.subarray(0, end).toString("utf8");
  return `${kept}\n[output truncated: showing ${end} of ${bytes} bytes; narrow the request to see the rest]`;
}
