import type { StreamEvent } from "./sse-frame.js";

/** One committed entry of the log as the stream delivered it. */
export interface LogEntry {
  id: string;
  segment: string;
  index: number;
  // biome-ignore lint/suspicious/noExplicitAny: entries are rendered by kind, read field by field
  entry: { kind: string; ts: number } & Record<string, any>;
}

/** The response the run is streaming now (not in the log yet). */
export interface Preview {
  segment: string;
  after: number;
  text: string;
  reasoning: string;
}

/** What an event changed: one entry to add, everything to draw again, the preview, or nothing. */
export type Change =
  | { kind: "entry"; entry: LogEntry }
  | { kind: "all" }
  | { kind: "preview" }
  | { kind: "live" }
  | { kind: "none" };

/**
 * The session as the page knows it: the committed entries in stream order and the preview of the
 * response in flight. Applies the stream's events (docs/serve.md, "Event stream").
 */
export class SessionModel {
  entries: LogEntry[] = [];
  preview: Preview | undefined;
  live = false;

  apply(event: StreamEvent): Change {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    switch (event.event) {
      case "entry": {
        const entry = { id: event.id as string, ...(data as Omit<LogEntry, "id">) };
        this.entries.push(entry);
        return { kind: "entry", entry };
      }
      case "reset": {
        const segment = data.segment as string | null;
        const from = segment === null ? 0 : this.entries.findIndex((e) => e.segment === segment);
        if (from >= 0) this.entries.length = from;
        return { kind: "all" };
      }
      case "truncate":
        this.entries = this.entries.filter(
          (e) => e.segment !== data.segment || e.index < (data.count as number),
        );
        return { kind: "all" };
      case "draft":
        this.preview = data as unknown as Preview;
        return { kind: "preview" };
      case "delta": {
        const preview = this.preview;
        if (preview === undefined || preview.segment !== data.segment || preview.after !== data.after)
          return { kind: "none" };
        if (data.kind === "reasoning") preview.reasoning += data.text as string;
        else preview.text += data.text as string;
        return { kind: "preview" };
      }
      case "live":
        this.live = true;
        return { kind: "live" };
      default:
        return { kind: "none" };
    }
  }

  /** The id of the last committed entry held: where a resumed stream continues. */
  get lastId(): string | undefined {
    return this.entries.at(-1)?.id;
  }

  /** True while a run is in progress: an `invoke` not yet closed by `run_completed`/`run_errored`. */
  get running(): boolean {
    let open = false;
    for (const { entry } of this.entries) {
      if (entry.kind === "invoke") open = true;
      else if (entry.kind === "run_completed" || entry.kind === "run_errored") open = false;
    }
    return open;
  }

  /** The preview while its response is not yet in the log this page holds. */
  get visiblePreview(): Preview | undefined {
    const preview = this.preview;
    if (preview === undefined || !this.running) return undefined;
    const committed = this.entries.some(
      (e) =>
        e.segment === preview.segment &&
        e.index >= preview.after &&
        (e.entry.kind === "assistant_item" ||
          e.entry.kind === "run_completed" ||
          e.entry.kind === "run_errored"),
    );
    return committed ? undefined : preview;
  }
}
