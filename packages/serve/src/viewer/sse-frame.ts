/** One event of a Server-Sent Event stream. */
export interface StreamEvent {
  event: string;
  id: string | undefined;
  data: string;
}

/**
 * One event from the text of a frame (its lines, without the blank line that ends it), as the
 * SSE spec reads it: comments skipped, `data` lines joined. Undefined for a frame without data
 * (a `retry:` line, a keepalive comment).
 */
export function parseFrame(frame: string): StreamEvent | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith(":") || line === "") continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  return data.length === 0 ? undefined : { event, id, data: data.join("\n") };
}
