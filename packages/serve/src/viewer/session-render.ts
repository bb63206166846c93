import {
  type ApprovalActions,
  answerLine,
  approvalBlock,
  markAnswered,
  markClosed,
} from "./approval-view.js";
import { type Child, collapsed, count, h, short } from "./dom.js";
import type { LogEntry, Preview } from "./session-model.js";

// biome-ignore lint/suspicious/noExplicitAny: items are JSON read field by field
type Json = Record<string, any>;

/**
 * What the page does with approvals (answer them, hear of each one that waits for a person) and
 * with a turn's "Rewind to here".
 */
export interface RendererActions extends ApprovalActions {
  /** An approval a person can answer was drawn (`block`), still pending. */
  onPendingApproval(block: HTMLElement): void;
  /** "Rewind to here" was pressed on finished turn `turn` (`button`, to give the focus back to). */
  rewind(turn: number, button: HTMLElement): void;
  /** The bytes of a media part of the session (`GET /sessions/:id/media/:digest`, with the page's token). */
  media?(digest: string): Promise<Blob>;
}

/**
 * Draws a session's entries into `timeline`, one element per entry (`data-entry-id`), grouped in
 * turns. A call's approval request and its answer go inside the call, and its result after them,
 * so the page reads in the order things happened. Appends as entries come; `redraw` starts over.
 */
export class SessionRenderer {
  private turn: HTMLElement | undefined;
  private readonly calls = new Map<string, HTMLElement>();
  /** Approval requests by call id (their answers go inside them). */
  private readonly approvals = new Map<string, HTMLElement>();
  private readonly previewBox = h("div", { class: "draft", id: "draft", hidden: "" });

  constructor(
    private readonly timeline: HTMLElement,
    private readonly actions: RendererActions = {
      answer: async () => {},
      answersAs: undefined,
      onPendingApproval: () => {},
      rewind: () => {},
    },
  ) {}

  redraw(entries: readonly LogEntry[], preview: Preview | undefined): void {
    this.timeline.replaceChildren();
    this.turn = undefined;
    this.calls.clear();
    this.approvals.clear();
    for (const entry of entries) this.add(entry);
    this.showPreview(preview);
  }

  add(log: LogEntry): void {
    const { entry } = log;
    const element = this.elementOf(log);
    element.dataset.entryId = log.id;
    element.dataset.segment = log.segment;
    element.dataset.index = String(log.index);
    element.classList.add("entry", `entry-${entry.kind}`);
    if (entry.kind === "segment_start") {
      this.turn = undefined;
      this.leaveBehind(log);
      this.timeline.append(element);
    } else if (entry.kind === "invoke") {
      this.turn = h("section", { class: "turn", "data-segment": log.segment }, element);
      this.timeline.append(this.turn);
    } else if (entry.kind === "tool_result" && this.calls.has(entry.item?.call_id)) {
      const approval = this.approvals.get(entry.item.call_id);
      if (approval !== undefined) markClosed(approval);
      (this.calls.get(entry.item.call_id) as HTMLElement).append(element);
    } else if (entry.kind === "approval_requested" && this.calls.has(entry.call_id)) {
      // The request shows the arguments in full: the call's own folded copy goes.
      const call = this.calls.get(entry.call_id) as HTMLElement;
      call.querySelector(":scope > details.arguments")?.remove();
      call.append(element);
    } else if (isDecision(entry) && this.calls.has(entry.payload.call_id)) {
      (this.calls.get(entry.payload.call_id) as HTMLElement).append(element);
    } else if (entry.kind === "approval_answered" && this.approvals.has(entry.call_id)) {
      markAnswered(this.approvals.get(entry.call_id) as HTMLElement, entry, element);
    } else if (entry.kind === "extension" && entry.domain === "session.rewind") {
      // Between turns, never inside the turn before it (which the rewind may have left behind).
      this.turn = undefined;
      this.timeline.append(element);
    } else {
      (this.turn ?? this.timeline).append(element);
    }
    this.timeline.append(this.previewBox);
    if (entry.kind === "approval_requested" && element.dataset.answerable === "true") {
      this.actions.onPendingApproval(element);
    }
  }

  showPreview(preview: Preview | undefined): void {
    if (preview === undefined) {
      this.previewBox.hidden = true;
      this.previewBox.replaceChildren();
      return;
    }
    this.previewBox.hidden = false;
    this.previewBox.replaceChildren(
      preview.reasoning === ""
        ? ""
        : collapsed("Reasoning (streaming)", h("div", { class: "text" }, preview.reasoning), "reasoning"),
      h("div", { class: "text" }, preview.text),
      h("span", { class: "cursor" }, "▍"),
    );
    this.timeline.append(this.previewBox);
  }

  private elementOf(log: LogEntry): HTMLElement {
    const e = log.entry as Json;
    switch (e.kind) {
      case "segment_start":
        return boundary(log);
      case "invoke":
        return h("div", { class: "turn-head" }, `Turn · ${e.trigger}`, h("time", {}, time(e.ts)));
      case "user_input":
        return h("div", { class: "user" }, h("div", { class: "text" }, e.text));
      case "assistant_item":
        return this.item(e.item as Json);
      case "tool_result":
        return this.outcome(e.item as Json);
      case "system_item":
        return collapsed(`${e.item.kind}`, h("div", { class: "text" }, e.item.body), "system");
      case "llm_usage":
        return usage(e);
      case "turn_end":
        return this.turnEnd(e);
      case "run_completed":
        if (e.result === "awaiting_approval")
          return h("div", { class: "outcome awaiting_approval" }, "awaiting approval");
        return h(
          "div",
          { class: `outcome ${e.interrupted ? "interrupted" : e.result}` },
          e.interrupted ? `${e.result} · interrupted` : e.result,
        );
      case "run_errored":
        return h("div", { class: "outcome error" }, `error: ${e.message}`);
      case "extension":
        return extension(e);
      case "approval_requested":
        return this.approvalRequest(e);
      case "approval_answered":
        return answerLine(e, h("time", {}, time(e.ts)));
      default:
        return h("div", { class: "meta" }, e.kind);
    }
  }

  /**
   * The end of a finished turn, with its "Rewind to here" (the log is untrusted: a turn number
   * that is not one gets no button).
   */
  private turnEnd(e: Json): HTMLElement {
    const line = h("div", { class: "meta turn-end" }, `turn ${e.turn} answered`);
    const turn = e.turn;
    if (this.turn === undefined || !Number.isSafeInteger(turn) || turn < 1) return line;
    this.turn.dataset.turn = String(turn);
    const button = h(
      "button",
      { type: "button", class: "rewind", "data-turn": String(turn), "aria-haspopup": "dialog" },
      h("span", { "aria-hidden": "true" }, "↶ "),
      "Rewind to here",
      h("span", { class: "visually-hidden" }, ` (turn ${turn})`),
    );
    button.addEventListener("click", () => this.actions.rewind(turn, button));
    line.append(button);
    return line;
  }

  /**
   * A segment that continues an earlier one after turn N (a rewind's or a drift's fork): the
   * turns after N drawn from the earlier segments are not the conversation's any more. They stay
   * on the page, marked, without their "Rewind to here".
   */
  private leaveBehind(log: LogEntry): void {
    const from = (log.entry as Json).forked_from ?? (log.entry as Json).compacted_from;
    if (log.index !== 0 || typeof from?.at_turn !== "number") return;
    for (const turn of this.timeline.querySelectorAll<HTMLElement>("section.turn[data-turn]")) {
      if (turn.dataset.segment === log.segment || Number(turn.dataset.turn) <= from.at_turn) continue;
      if (turn.classList.contains("left-behind")) continue;
      turn.classList.add("left-behind");
      turn.querySelector("button.rewind")?.remove();
      turn.append(
        h(
          "p",
          { class: "left-behind-note" },
          `Not part of the conversation any more: it continues after turn ${from.at_turn} in segment ${short(log.segment)}.`,
        ),
      );
    }
  }

  /** A call's outcome, with the images and PDFs its result carries (docs/media.md). */
  private outcome(item: Json): HTMLElement {
    const line = outcome(item);
    const load = this.actions.media;
    const parts =
      Array.isArray(item.media) && load !== undefined
        ? item.media.flatMap((ref: unknown) => mediaPart(ref, load))
        : [];
    if (parts.length > 0) line.append(h("div", { class: "media" }, ...parts));
    return line;
  }

  private approvalRequest(e: Json): HTMLElement {
    const block = approvalBlock(e, this.actions);
    this.approvals.set(e.call_id, block);
    return block;
  }

  private item(item: Json): HTMLElement {
    if (item.type === "reasoning")
      return collapsed("Reasoning", h("div", { class: "text" }, item.text ?? ""), "reasoning");
    if (item.type === "tool_call") {
      const memory = /^memory_(write|edit|delete)$/.test(item.name);
      const call = h(
        "div",
        { class: `tool${memory ? " memory" : ""}` },
        h("div", { class: "tool-head" }, memory ? `memory record · ${item.name}` : `tool · ${item.name}`),
        collapsed("arguments", h("pre", {}, pretty(item.arguments)), "arguments"),
      );
      this.calls.set(item.call_id, call);
      return call;
    }
    const text = (item.content ?? []).map((part: Json) => (part.type === "text" ? part.text : "")).join("");
    return h("div", { class: "assistant" }, h("div", { class: "text" }, text));
  }
}

function boundary(log: LogEntry): HTMLElement {
  const e = log.entry as Json;
  const lines: Child[] = [];
  if (e.compacted_from !== undefined) {
    lines.push(
      `Compaction · continues segment ${short(e.compacted_from.segment_id)} after turn ${e.compacted_from.at_turn}`,
    );
    const summary = (e.history as Json[]).find((item) => item.type === "message");
    if (summary !== undefined)
      lines.push(
        collapsed("summary the session continues from", h("div", { class: "text" }, textOf(summary))),
      );
  } else if (e.forked_from !== undefined) {
    lines.push(
      `Continues in a fork of segment ${short(e.forked_from.segment_id)} at turn ${e.forked_from.at_turn}`,
    );
  } else {
    lines.push(`Session started`, h("time", {}, time(e.ts)));
  }
  if (log.index === 0 && e.compacted_from === undefined && e.system_prompt !== null) {
    lines.push(collapsed("system prompt", h("pre", {}, e.system_prompt)));
  }
  return h(
    "div",
    { class: "boundary" },
    h("div", { class: "segment-id" }, `segment ${short(log.segment)}`),
    ...lines,
  );
}

function outcome(item: Json): HTMLElement {
  return h(
    "div",
    { class: `tool-outcome ${item.is_error ? "failed" : "ok"}` },
    `${item.is_error ? "✗" : "✓"} ${item.summary}`,
  );
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * One media part of a tool result: an image, or a link to a PDF, whose bytes are fetched with the
 * page's token and shown from a `blob:` URL. The log is untrusted: a part without a well-formed
 * digest is left out, and the served type is the server's reading of the bytes, not the log's.
 */
function mediaPart(ref: unknown, load: (digest: string) => Promise<Blob>): HTMLElement[] {
  const r = (typeof ref === "object" && ref !== null ? ref : {}) as Json;
  if (typeof r.digest !== "string" || !DIGEST.test(r.digest)) return [];
  const type = typeof r.media_type === "string" ? r.media_type : "media";
  const size =
    Number.isSafeInteger(r.width) && Number.isSafeInteger(r.height) ? ` ${r.width}×${r.height}` : "";
  const label = `${type}${size}`;
  const fetched = load(r.digest).then((blob) => URL.createObjectURL(blob));
  if (type.startsWith("image/")) {
    const image = h("img", { class: "media-image", alt: label, title: label, "data-digest": r.digest });
    fetched.then(
      (url) => {
        // Drawn once loaded: the URL is not needed after that.
        image.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
        image.setAttribute("src", url);
      },
      () => image.replaceWith(h("span", { class: "media-missing" }, `${label} (not available)`)),
    );
    return [image];
  }
  const name = typeof r.name === "string" ? r.name : type;
  const link = h(
    "a",
    { class: "media-file", "data-digest": r.digest, target: "_blank", rel: "noopener" },
    `${name} (${type})`,
  );
  fetched.then(
    (url) => link.setAttribute("href", url),
    () => link.replaceWith(h("span", { class: "media-missing" }, `${name} (not available)`)),
  );
  return [link];
}

function usage(e: Json): HTMLElement {
  const share = e.input_tokens > 0 ? Math.round((100 * e.cache_read_tokens) / e.input_tokens) : 0;
  return h(
    "div",
    { class: "usage" },
    `request · ${count(e.input_tokens)} in (${share}% cached, ${count(e.cache_write_tokens)} written) · ${count(e.output_tokens)} out`,
  );
}

/** A `policy.decision` entry the viewer can draw (the log is untrusted: anything else is a plain extension). */
function isDecision(e: Json): boolean {
  return (
    e.kind === "extension" &&
    e.domain === "policy.decision" &&
    typeof e.payload === "object" &&
    e.payload !== null &&
    typeof e.payload.decided_by === "string" &&
    typeof e.payload.outcome === "string"
  );
}

const DECISION_MARKS: Record<string, string> = {
  allow: "✓",
  ask: "?",
  deny: "✗",
  pause: "‖",
  reject: "✗",
  feedback: "↺",
  stop: "■",
};

/** One decision: who decided what, under which rule, and why (docs/permissions.md). */
function decision(e: Json): HTMLElement {
  const d = e.payload as Json;
  const subject =
    typeof d.call_id === "string"
      ? ""
      : `${d.point === "final_answer" ? "final answer" : String(d.point ?? "run")} · `;
  return h(
    "p",
    { class: `decision ${String(d.outcome)}`, "data-decided-by": String(d.decided_by) },
    h("span", { "aria-hidden": "true" }, `${DECISION_MARKS[String(d.outcome)] ?? "·"} `),
    `${subject}${String(d.outcome)} by ${String(d.decided_by)}`,
    typeof d.rule === "string" ? h("code", {}, ` ${d.rule}`) : "",
    typeof d.reason === "string" ? ` · ${d.reason}` : "",
    h("time", {}, time(e.ts)),
  );
}

/** A `final_output` entry the viewer can draw: a value and the schema's digest (the log is untrusted). */
function isFinalOutput(e: Json): boolean {
  return (
    e.domain === "final_output" &&
    typeof e.payload === "object" &&
    e.payload !== null &&
    Object.hasOwn(e.payload, "value") &&
    typeof e.payload.schema_digest === "string"
  );
}

/** Lines of pretty JSON past which a typed answer is folded (its first line stays as the title). */
const OUTPUT_FOLD_LINES = 16;

/**
 * The turn's typed answer (docs/output.md): the value as pretty JSON (folded when long), the
 * schema's digest shortened, the normalisations that made it valid and the repairs it took.
 */
function typedAnswer(e: Json): HTMLElement {
  const p = e.payload as Json;
  const normalizations = Array.isArray(p.normalizations) ? p.normalizations.map(String) : [];
  const repairs = Array.isArray(p.repairs) ? p.repairs.length : 0;
  const digest = String(p.schema_digest);
  const json = JSON.stringify(p.value, null, 2) ?? "null";
  const lines = json.split("\n").length;
  const value = h("pre", { class: "output-value" }, json);
  return h(
    "div",
    { class: "typed-output", "data-schema-digest": digest },
    h(
      "div",
      { class: "output-head" },
      "typed answer · schema ",
      h("code", { title: digest }, digest.replace(/^sha256:/, "").slice(0, 12)),
      normalizations.length === 0 ? "" : ` · ${normalizations.join(", ")}`,
      ` · ${repairs === 0 ? "no repairs" : `${repairs} repair${repairs === 1 ? "" : "s"}`}`,
      h("time", {}, time(e.ts)),
    ),
    lines > OUTPUT_FOLD_LINES
      ? collapsed(`${oneLineJson(p.value)} (${lines} lines)`, value, "output-fold")
      : value,
  );
}

/** The value as compact JSON cut to one short line, the title of a folded answer. */
function oneLineJson(value: unknown): string {
  const json = JSON.stringify(value) ?? "null";
  return json.length > 80 ? `${json.slice(0, 79)}…` : json;
}

function extension(e: Json): HTMLElement {
  if (isDecision(e)) return decision(e);
  if (isFinalOutput(e)) return typedAnswer(e);
  if (e.domain === "session.rewind") return rewound(e);
  if (e.domain === "memory.extract") {
    return h(
      "div",
      { class: "memory" },
      `memory · entries up to ${e.payload?.next_entry ?? "?"} distilled into staged notes`,
    );
  }
  return h("div", { class: "meta" }, `${e.domain}`);
}

/**
 * A rewind's record: in the segment it left, the turn it went back to, where the conversation
 * continues and how many files it set; at the start of the head a conversation-only rewind made,
 * the files it left as they were (docs/rewind.md).
 */
function rewound(e: Json): HTMLElement {
  const p = (typeof e.payload === "object" && e.payload !== null ? e.payload : {}) as Json;
  const files = Array.isArray(p.changes) ? p.changes.length : 0;
  const plural = files === 1 ? "" : "s";
  const parts = [`↶ rewound to turn ${Number.isSafeInteger(p.to_turn) ? p.to_turn : "?"}`];
  if (!Object.hasOwn(p, "segment_id")) parts.push(`${files} file${plural} left as the earlier line had them`);
  else {
    parts.push(
      typeof p.segment_id === "string"
        ? `the conversation continues in segment ${short(p.segment_id)}`
        : "files only",
    );
    parts.push(`${files} file${plural} restored or removed`);
  }
  return h("div", { class: "meta rewound" }, parts.join(" · "), h("time", {}, time(e.ts)));
}

function textOf(item: Json): string {
  return (item.content ?? []).map((part: Json) => (part.type === "text" ? part.text : "")).join("");
}

function pretty(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

function time(ts: number): string {
  return new Date(ts).toISOString().replace("T", " ").slice(0, 19);
}
