import { askDenyReason } from "./deny-dialog.js";
import { type Child, h } from "./dom.js";

// biome-ignore lint/suspicious/noExplicitAny: entries are JSON read field by field
type Json = Record<string, any>;

/** What an approval's buttons do, and who the answer is credited to. */
export interface ApprovalActions {
  /** Posts the answer; rejects when the server refused it (the page shows why). */
  answer(callId: string, decision: "allow" | "deny", reason?: string): Promise<void>;
  /** The name an answer from this page is recorded under (`GET /identity`), when known. */
  answersAs: string | undefined;
}

/** The arguments of the builtin tools a person decides on, by readable name, shown first. */
const ARGUMENT_LABELS = new Map([
  ["command", "command"],
  ["path", "file"],
  ["content", "content"],
  ["old_string", "replaces"],
  ["new_string", "with"],
]);

/** Text this long is shown in a box of its own that scrolls (and can be scrolled from the keyboard). */
const LONG_TEXT = { lines: 40, chars: 4000 };

/**
 * An approval request: which tool asks and why, every argument of the call in full (a bash call's
 * whole command, a write's path and content), and — while it waits for a person — who the answer
 * is credited to and Allow and Deny (Deny asks for an optional reason). A delegated one (a call
 * waiting on its sub-pod's approvals) links to that sub-pod instead: it is answered there.
 */
export function approvalBlock(e: Json, actions: ApprovalActions): HTMLElement {
  const titleId = `approval-title-${e.call_id}`;
  const delegated = typeof e.child_session_id === "string";
  const block = h(
    "div",
    {
      class: `approval pending${delegated ? " delegated" : ""}`,
      role: "group",
      "aria-labelledby": titleId,
      "data-call-id": e.call_id,
      "data-tool": e.tool,
      ...(delegated ? {} : { "data-answerable": "true" }),
    },
    h(
      "h2",
      { class: "approval-title", id: titleId },
      titleOf(e.tool, delegated ? "waits for its sub-pod" : "waits for your approval"),
    ),
    h(
      "p",
      { class: "approval-meta" },
      `asked by ${e.asked_by} · pod ${(e.pod_path ?? []).join(" › ")}`,
      e.reason === undefined ? null : ` · ${e.reason}`,
    ),
    argumentList(e.arguments),
  );
  if (delegated) {
    block.append(
      h(
        "p",
        { class: "approval-delegated" },
        "Its sub-pod asks for approval; answer it on the sub-pod's page: ",
        h("a", { href: `#/sessions/${e.child_session_id}` }, "open the sub-pod"),
      ),
    );
    return block;
  }
  const allow = h(
    "button",
    { type: "button", class: "allow", "data-decision": "allow" },
    h("span", { "aria-hidden": "true" }, "✓ "),
    "Allow",
  );
  const deny = h(
    "button",
    { type: "button", class: "deny", "data-decision": "deny", "aria-haspopup": "dialog" },
    h("span", { "aria-hidden": "true" }, "✗ "),
    "Deny…",
  );
  const buttons = [allow, deny];
  // While an answer is on its way the buttons say so (aria-disabled) but keep the focus: a
  // disabled button would drop a keyboard user's focus to the top of the page.
  let sending = false;
  const send = (decision: "allow" | "deny", reason?: string) => {
    sending = true;
    for (const button of buttons) button.setAttribute("aria-disabled", "true");
    actions.answer(e.call_id, decision, reason).catch(() => {
      sending = false;
      for (const button of buttons) button.removeAttribute("aria-disabled");
      (decision === "allow" ? allow : deny).focus();
    });
  };
  allow.addEventListener("click", () => {
    if (!sending) send("allow");
  });
  deny.addEventListener("click", () => {
    if (sending) return;
    void askDenyReason(`${e.tool} call`).then((reason) => {
      if (reason === undefined) deny.focus();
      else send("deny", reason === "" ? undefined : reason);
    });
  });
  if (actions.answersAs !== undefined) {
    block.append(
      h(
        "p",
        { class: "approval-as" },
        "Your answer is recorded as ",
        h("strong", {}, actions.answersAs),
        ".",
      ),
    );
  }
  block.append(
    h(
      "div",
      { class: "approval-buttons", role: "group", "aria-label": `Answer the ${e.tool} call` },
      ...buttons,
    ),
  );
  return block;
}

/**
 * The request `block` was answered: it loses its buttons and says how it ended; `answer` (the
 * element of the `approval_answered` entry) goes inside it, so the call's result comes after. A
 * keyboard user whose focus was on the buttons keeps it on the block.
 */
export function markAnswered(block: HTMLElement, e: Json, answer: HTMLElement): void {
  const hadFocus = block.contains(document.activeElement);
  const verb = e.decision === "allow" ? "allowed" : "denied";
  block.classList.remove("pending");
  block.classList.add(verb);
  block.removeAttribute("data-answerable");
  block.querySelector(".approval-buttons")?.remove();
  block.querySelector(".approval-as")?.remove();
  const title = block.querySelector(".approval-title");
  title?.replaceChildren(titleOf(block.dataset.tool ?? "", verb));
  block.append(answer);
  if (hadFocus) {
    block.tabIndex = -1;
    block.focus();
  }
}

/**
 * The call of a request still pending got its result without an answer (a delegated call went on
 * once its sub-pod's approvals were answered; a new message closed a call nobody answered): the
 * request loses its buttons and says so.
 */
export function markClosed(block: HTMLElement): void {
  if (!block.classList.contains("pending")) return;
  block.classList.replace("pending", "closed");
  block.removeAttribute("data-answerable");
  block.querySelector(".approval-buttons")?.remove();
  block.querySelector(".approval-as")?.remove();
  const delegated = block.classList.contains("delegated");
  block
    .querySelector(".approval-title")
    ?.replaceChildren(
      titleOf(block.dataset.tool ?? "", delegated ? "went on after its sub-pod" : "closed unanswered"),
    );
}

/** The line of an answer: who decided what, why, when. */
export function answerLine(e: Json, when: Child): HTMLElement {
  const verb = e.decision === "allow" ? "allowed" : "denied";
  return h(
    "p",
    { class: `approval-answer ${verb}`, "data-call-id": e.call_id },
    h("span", { "aria-hidden": "true" }, e.decision === "allow" ? "✓ " : "✗ "),
    `${verb} by ${e.by}`,
    e.reason === undefined ? "" : ` · ${e.reason}`,
    when,
  );
}

function titleOf(tool: string, state: string): HTMLElement {
  return h("span", {}, h("code", {}, tool), ` ${state}`);
}

/** Every argument of the call, in full: the ones a person decides on first, by a readable name. */
function argumentList(text: string): HTMLElement {
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    args = undefined;
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return h("pre", { class: "approval-raw" }, text);
  }
  const entries = Object.entries(args as Record<string, unknown>);
  const rank = (key: string) => {
    const order = [...ARGUMENT_LABELS.keys()].indexOf(key);
    return order < 0 ? ARGUMENT_LABELS.size : order;
  };
  entries.sort((a, b) => rank(a[0]) - rank(b[0]));
  return h(
    "dl",
    { class: "approval-args" },
    ...entries.flatMap(([key, value]) => [
      h("dt", {}, ARGUMENT_LABELS.get(key) ?? key),
      h("dd", {}, argumentValue(key, value)),
    ]),
  );
}

function argumentValue(key: string, value: unknown): HTMLElement {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const lines = text.split("\n").length;
  if (lines <= LONG_TEXT.lines && text.length <= LONG_TEXT.chars) {
    return h("pre", { class: "arg", "data-arg": key }, text);
  }
  // A scrolling box a keyboard can reach (and scroll), named for a screen reader.
  return h(
    "pre",
    {
      class: "arg long",
      "data-arg": key,
      tabindex: "0",
      role: "region",
      "aria-label": `${ARGUMENT_LABELS.get(key) ?? key}: ${lines} lines`,
    },
    text,
  );
}
