import type { PodEvent } from "@podkit/pod";
import type { TextSink } from "../io.js";
import { type Progress, startProgress } from "./progress.js";
import { scopeDenialHint } from "./scope-denial-hint.js";
import { type Style, styleFor } from "./style.js";

/** Shows a run's events to a person or a program. */
export interface EventPrinter {
  print(event: PodEvent): void;
  /** Ends any open line (before a prompt or a message of the CLI's own). */
  endLine(): void;
  /** A tool call the CLI denied (it has no tool events of its own). */
  denied(call: { name: string; arguments: string }, reason: string): void;
}

/** Events of features that arrive with other packages (compaction, memory), read loosely. */
type LooseEvent = { type: string; [key: string]: unknown };

/** How the background jobs the CLI knows (memory's) are shown while they run. */
const JOB_LABELS: Readonly<Record<string, string>> = {
  memory_extract: "extracting memory",
  memory_consolidate: "consolidating memory",
};

/** `run --json`: one JSON object per event and line (errors as their message). */
export function jsonEventPrinter(out: TextSink): EventPrinter {
  return {
    print(event) {
      const shown: Record<string, unknown> = { ...event };
      for (const [key, value] of Object.entries(shown)) {
        if (value instanceof Error) shown[key] = { message: value.message };
      }
      if (event.type === "tool_call_end" && event.isError) {
        const hint = scopeDenialHint(event.summary);
        if (hint !== undefined) shown.hint = hint;
      }
      out.write(`${JSON.stringify(shown)}\n`);
    },
    endLine() {},
    denied(call, reason) {
      out.write(
        `${JSON.stringify({ type: "tool_call_denied", name: call.name, arguments: call.arguments, reason })}\n`,
      );
    },
  };
}

/**
 * Human-readable output: text as it streams, reasoning dimmed (or hidden), one line per tool call
 * with its outcome, notifications and progress of long work. Control codes only on a terminal.
 */
export function textEventPrinter(out: TextSink, options: { hideReasoning?: boolean } = {}): EventPrinter {
  const tty = out.isTTY === true;
  const style: Style = styleFor(tty);
  let block: "text" | "reasoning" | undefined;
  let midLine = false;
  const calls = new Map<string, string>();
  let liveCall: string | undefined;
  let progress: Progress | undefined;
  let jobProgress: Progress | undefined;

  const write = (text: string) => {
    if (text === "") return;
    out.write(text);
    midLine = !text.endsWith("\n");
  };
  const endLine = () => {
    if (liveCall !== undefined) {
      write("\n");
      liveCall = undefined;
    }
    if (midLine) write("\n");
    block = undefined;
  };
  const enter = (kind: "text" | "reasoning") => {
    if (block === kind) return;
    endLine();
    block = kind;
    if (kind === "reasoning" && !tty) write("(reasoning) ");
  };

  return {
    endLine,
    denied(call, reason) {
      endLine();
      write(`${style.red("✗")} ${call.name}(${argumentPreview(call.arguments)}) → denied: ${reason}\n`);
    },
    print(raw) {
      const event = raw as PodEvent | LooseEvent;
      switch (event.type) {
        case "text_delta":
          enter("text");
          write((event as { delta: string }).delta);
          return;
        case "reasoning_delta":
          if (options.hideReasoning === true) return;
          enter("reasoning");
          write(style.dim((event as { delta: string }).delta));
          return;
        case "tool_call_start": {
          const call = event as Extract<PodEvent, { type: "tool_call_start" }>;
          const label = `${call.name}(${argumentPreview(call.arguments)})`;
          calls.set(call.callId, label);
          endLine();
          if (tty) {
            // Kept to one row, so that clearing the line removes all of it.
            write(style.dim(oneLine(`⋯ ${label}`, (out.columns ?? 80) - 1)));
            liveCall = call.callId;
          }
          return;
        }
        case "turn_start":
          // A call interrupted in an earlier turn may still report its end (its process was
          // killed late); that turn is over, and its outcome is in the log.
          calls.clear();
          liveCall = undefined;
          return;
        case "tool_call_end": {
          const call = event as Extract<PodEvent, { type: "tool_call_end" }>;
          const label = calls.get(call.callId);
          if (label === undefined) return;
          calls.delete(call.callId);
          const mark = call.isError ? style.red("✗") : style.green("✓");
          const hint = call.isError ? scopeDenialHint(call.summary) : undefined;
          const line = `${mark} ${label} → ${oneLine(call.summary, 160)}\n${hint === undefined ? "" : `  ${style.dim(`hint: ${hint}`)}\n`}`;
          if (liveCall === call.callId) {
            write(style.clearLine);
            liveCall = undefined;
            midLine = false;
          } else endLine();
          write(line);
          return;
        }
        case "notification":
          endLine();
          write(`${style.bold("notification:")} ${oneLine((event as { message: string }).message, 200)}\n`);
          return;
        case "drift_fork":
          endLine();
          write(
            `${style.red("warning:")} another process wrote to this session; continuing in a fork of it\n`,
          );
          return;
        case "compaction_start":
          endLine();
          progress = startProgress(out, `compacting the context (${String(event.reason ?? "")})`);
          return;
        case "compaction_done":
          progress?.done(
            `${String(event.tokensBefore)} → ${String(event.tokensAfter)} tokens, new segment ${String(event.toSegmentId)}`,
          );
          progress = undefined;
          return;
        case "compaction_failed": {
          const error = event.error instanceof Error ? event.error.message : String(event.error);
          (progress ?? startProgress(out, "compacting the context")).failed(
            `${error}${event.disabled === true ? " (compaction is now off for this session)" : ""}`,
          );
          progress = undefined;
          return;
        }
        case "job_progress": {
          const job = event as Extract<PodEvent, { type: "job_progress" }>;
          const label = JOB_LABELS[job.job] ?? `running ${job.job}`;
          if (job.status === "start") {
            endLine();
            jobProgress = startProgress(out, label);
          } else if (job.status === "done") {
            jobProgress?.done(job.detail ?? "done");
            jobProgress = undefined;
          } else {
            (jobProgress ?? startProgress(out, label)).failed(job.error?.message ?? job.detail ?? "failed");
            jobProgress = undefined;
          }
          return;
        }
        case "turn_end":
        case "run_end":
          endLine();
          return;
        default:
          return;
      }
    },
  };
}

/** A tool call's arguments in one short line: the values of a flat object, else the JSON. */
function argumentPreview(json: string): string {
  try {
    const value = JSON.parse(json) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const parts = Object.values(value).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
      return oneLine(parts.join(", "), 80);
    }
  } catch {
    // Not JSON (a truncated call): show it as it is.
  }
  return oneLine(json, 80);
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
