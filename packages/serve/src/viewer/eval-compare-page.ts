import { ApiError, api } from "./api.js";
import { type Child, h } from "./dom.js";

// The shape of `GET /sessions/:id/eval-compare` (docs/serve.md), as this page reads it.

interface DiffPart {
  op: "same" | "removed" | "added";
  text: string;
}

interface ComparedCall {
  name: string;
  arguments: string;
  result: string | null;
  isError: boolean;
}

type CallChange =
  | { change: "same" | "changed"; name: string; original: ComparedCall; item: ComparedCall }
  | { change: "removed"; name: string; original: ComparedCall }
  | { change: "added"; name: string; item: ComparedCall };

interface TurnSide {
  turn: number;
  input: string | null;
  answer: string;
  toolCalls: ComparedCall[];
  status: string;
}

interface ComparedTurn {
  position: number;
  original: TurnSide | null;
  item: TurnSide | null;
  answerDiff: DiffPart[] | null;
  toolCalls: CallChange[];
}

interface EvalCompare {
  sessionId: string;
  origin: {
    evalId: string;
    sourceSession: string | null;
    fromTurn: number | null;
    toTurn: number | null;
    variant: Record<string, string>;
  };
  source: { sessionId: string | null; problem: string | null };
  turns: ComparedTurn[];
  scores: {
    name: string;
    score: number;
    pass: boolean;
    baselineScore: number | null;
    detail: string | null;
  }[];
}

/** What each kind of tool-call change is called on the page (the words carry it, not the colour). */
const CHANGE_WORDS: Record<CallChange["change"], string> = {
  same: "same",
  changed: "other arguments",
  removed: "only in the original",
  added: "only in the item",
};

/**
 * The page of an eval item beside its original (`#/sessions/<id>/compare`): how it was made (eval
 * id, source session, turn range, variant), its scores against the baseline's, then turn by turn
 * the original's turn and the item's side by side, a word diff of the answers and a table of the
 * tool calls (same, with other arguments, only in one of them). Every difference is said in words
 * as well as shown in colour. A session that is not an eval item, or an original that cannot be
 * read, is said on the page; only a refused token is left to the caller (it asks for one).
 */
export async function evalComparePage(root: HTMLElement, sessionId: string): Promise<() => void> {
  const path = `/sessions/${encodeURIComponent(sessionId)}`;
  const head = h(
    "div",
    { class: "session-head" },
    h("a", { href: `#${path}` }, "← the item's session"),
    h("h1", {}, `Eval item ${sessionId} beside its original`),
  );
  const page = h("section", { id: "eval-compare", "data-session-id": sessionId }, head);
  root.replaceChildren(page);
  let data: EvalCompare;
  try {
    data = await api<EvalCompare>(`${path}/eval-compare`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw error;
    const text =
      error instanceof ApiError
        ? `${error.message}${typeof (error.body as { hint?: unknown })?.hint === "string" ? ` (${(error.body as { hint: string }).hint})` : ""}`
        : String(error instanceof Error ? error.message : error);
    page.append(h("p", { class: "problem", id: "compare-problem", role: "alert" }, text));
    return () => {};
  }
  const shown = data.source.problem === null;
  page.append(
    originBlock(data),
    ...(shown
      ? []
      : [h("p", { class: "problem", id: "source-problem", role: "alert" }, data.source.problem)]),
    scoresBlock(data),
    ...data.turns.map((turn) => turnBlock(turn, shown)),
    ...(data.turns.length === 0
      ? [h("p", { class: "empty" }, "Neither session has a turn to compare.")]
      : []),
  );
  return () => {};
}

/** How the item was made: its eval, its original (a link when it can be opened) and what the variant changed. */
function originBlock(data: EvalCompare): HTMLElement {
  const { origin } = data;
  const source = data.source.sessionId;
  const range =
    origin.fromTurn === null
      ? "—"
      : `${origin.fromTurn} to ${origin.toTurn === null ? "the last" : origin.toTurn}`;
  const variant = Object.entries(origin.variant);
  const row = (term: string, value: Child) => [h("dt", {}, term), h("dd", {}, value)];
  return h(
    "dl",
    { class: "eval-origin", id: "eval-origin" },
    ...row("Eval", origin.evalId),
    ...row(
      "Original session",
      source === null
        ? (origin.sourceSession ?? "none (dataset inputs)")
        : data.source.problem === null
          ? h("a", { href: `#/sessions/${encodeURIComponent(source)}` }, source)
          : source,
    ),
    ...row("Turns replayed", range),
    ...row(
      "Variant",
      variant.length === 0
        ? "unchanged (the recording's manifest and model)"
        : h(
            "span",
            {},
            ...variant.flatMap(([key, value], i) => [i > 0 ? "; " : "", h("code", {}, key), ` ${value}`]),
          ),
    ),
  );
}

/** The item's scores beside the baseline's (the recording scored alike). */
function scoresBlock(data: EvalCompare): HTMLElement {
  const title = h("h2", { id: "scores-title" }, "Scores");
  if (data.scores.length === 0) {
    return h(
      "section",
      { class: "eval-scores", "aria-labelledby": title.id },
      title,
      h("p", { class: "empty" }, "No scores recorded yet."),
    );
  }
  const score = (n: number | null) => (n === null ? "—" : n.toFixed(2));
  return h(
    "section",
    { class: "eval-scores", "aria-labelledby": title.id },
    title,
    h(
      "table",
      { class: "eval-table", id: "scores" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Scorer"),
          h("th", { scope: "col" }, "Item"),
          h("th", { scope: "col" }, "Original"),
          h("th", { scope: "col" }, "Result"),
          h("th", { scope: "col" }, "Detail"),
        ),
      ),
      h(
        "tbody",
        {},
        ...data.scores.map((s) =>
          h(
            "tr",
            { "data-scorer": s.name },
            h("th", { scope: "row" }, s.name),
            h("td", {}, score(s.score)),
            h("td", {}, score(s.baselineScore)),
            h("td", { class: s.pass ? "pass" : "fail" }, s.pass ? "pass" : "FAIL"),
            h("td", {}, s.detail ?? ""),
          ),
        ),
      ),
    ),
  );
}

/** One turn of the case: both sides, then what differs. */
function turnBlock(turn: ComparedTurn, sourceShown: boolean): HTMLElement {
  const id = `turn-${turn.position}`;
  const input = turn.item?.input ?? turn.original?.input ?? null;
  const sides = h(
    "div",
    { class: "compare-columns" },
    sourceShown ? sideBlock(turn.original, "Original", `${id}-original`) : null,
    sideBlock(turn.item, "Item", `${id}-item`),
  );
  return h(
    "section",
    { class: "compare-turn", id, "aria-labelledby": `${id}-title`, "data-position": String(turn.position) },
    h("h2", { id: `${id}-title` }, `Turn ${turn.position}`),
    input === null ? null : h("p", { class: "compare-input" }, h("strong", {}, "Input: "), input),
    sides,
    sourceShown ? answerDiffBlock(turn, id) : null,
    sourceShown ? callTable(turn, id) : null,
  );
}

function sideBlock(side: TurnSide | null, label: string, id: string): HTMLElement {
  const title = h("h3", { id: `${id}-title` }, side === null ? label : `${label} · turn ${side.turn}`);
  if (side === null) {
    return h(
      "article",
      { class: "compare-side", id, "aria-labelledby": title.id },
      title,
      h("p", { class: "empty" }, `The ${label.toLowerCase()} has no such turn.`),
    );
  }
  return h(
    "article",
    { class: "compare-side", id, "aria-labelledby": title.id, "data-status": side.status },
    title,
    h(
      "div",
      { class: "text compare-answer" },
      side.answer === "" ? h("span", { class: "empty" }, "(no answer)") : side.answer,
    ),
    side.status === "finished" ? null : h("p", { class: "hint" }, `The turn ended ${side.status}.`),
    side.toolCalls.length === 0
      ? h("p", { class: "hint" }, "No tool calls.")
      : h(
          "ol",
          { class: "compare-calls", "aria-label": `${label}: tool calls` },
          ...side.toolCalls.map((call) =>
            h(
              "li",
              {},
              h("code", {}, call.name),
              " ",
              h("code", { class: "compare-args" }, call.arguments),
              call.result === null
                ? h("span", { class: "hint" }, " (no result)")
                : h(
                    "span",
                    { class: call.isError ? "tool-outcome failed" : "hint" },
                    ` → ${call.isError ? "error: " : ""}${call.result}`,
                  ),
            ),
          ),
        ),
  );
}

/** The answers' word diff: removed words struck through, added ones underlined, each also named for screen readers. */
function answerDiffBlock(turn: ComparedTurn, id: string): HTMLElement {
  const title = h("h3", { id: `${id}-answer-title` }, "Answer: original → item");
  const parts = turn.answerDiff;
  if (parts === null) {
    return h(
      "div",
      { class: "answer-diff", id: `${id}-answer`, "aria-labelledby": title.id },
      title,
      h("p", { class: "empty" }, "Only one side has this turn."),
    );
  }
  const changed = parts.filter((part) => part.op !== "same");
  const words = (op: DiffPart["op"]) =>
    parts
      .filter((part) => part.op === op)
      .reduce((n, part) => n + part.text.trim().split(/\s+/).filter(Boolean).length, 0);
  const summary =
    changed.length === 0
      ? "The answers are the same."
      : `${words("removed")} word(s) only in the original, ${words("added")} only in the item.`;
  return h(
    "div",
    {
      class: "answer-diff",
      id: `${id}-answer`,
      "aria-labelledby": title.id,
      "data-same": String(changed.length === 0),
    },
    title,
    h("p", { class: "hint diff-summary" }, summary),
    changed.length === 0
      ? null
      : h(
          "p",
          { class: "text diff-text" },
          ...parts.map((part) =>
            part.op === "same"
              ? part.text
              : h(
                  part.op === "removed" ? "del" : "ins",
                  {},
                  h(
                    "span",
                    { class: "visually-hidden" },
                    part.op === "removed" ? "[original only: " : "[item only: ",
                  ),
                  part.text,
                  h("span", { class: "visually-hidden" }, "]"),
                ),
          ),
        ),
  );
}

/** The tool calls of both sides, matched: a row per call, with what changed in words. */
function callTable(turn: ComparedTurn, id: string): HTMLElement {
  const title = h("h3", { id: `${id}-calls-title` }, "Tool calls: original → item");
  if (turn.toolCalls.length === 0) {
    return h(
      "div",
      { class: "call-diff", "aria-labelledby": title.id },
      title,
      h("p", { class: "hint" }, "Neither side called a tool."),
    );
  }
  const args = (call: ComparedCall | undefined) =>
    call === undefined ? "—" : h("code", { class: "compare-args" }, call.arguments);
  return h(
    "div",
    { class: "call-diff", "aria-labelledby": title.id },
    title,
    h(
      "table",
      { class: "eval-table", id: `${id}-calls` },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Tool"),
          h("th", { scope: "col" }, "Change"),
          h("th", { scope: "col" }, "Original arguments"),
          h("th", { scope: "col" }, "Item arguments"),
        ),
      ),
      h(
        "tbody",
        {},
        ...turn.toolCalls.map((change) =>
          h(
            "tr",
            { class: `call-${change.change}`, "data-change": change.change, "data-tool": change.name },
            h("th", { scope: "row" }, h("code", {}, change.name)),
            h("td", {}, CHANGE_WORDS[change.change]),
            h("td", {}, args("original" in change ? change.original : undefined)),
            h("td", {}, args("item" in change ? change.item : undefined)),
          ),
        ),
      ),
    ),
  );
}
