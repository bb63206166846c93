/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character, ending with a
 * notice saying how much was dropped (the notice counts against the cap, so the result never
 * exceeds it; when the cap is too small for the notice the text is only cut). Text within the
 * cap is returned unchanged.
 */
export function capToolOutput(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const buf = Buffer.from(text, "utf8");
  const notice = (shown: number) =>
    `\n[output truncated: showing ${shown} of ${bytes} bytes; narrow the request to see the rest]`;
  const room = Math.max(0, maxBytes - Buffer.byteLength(notice(maxBytes), "utf8"));
  const withNotice = room > 0;
  let end = withNotice ? room : Math.max(0, maxBytes);
  // Back up over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  const kept = buf.subarray(0, end).toString("utf8");
  return withNotice ? `${kept}${notice(end)}` : kept;
}

/** Bytes the model sees between a tool result's summary and its content ("\n\n"). */
export const SUMMARY_CONTENT_SEPARATOR_BYTES = 2;
