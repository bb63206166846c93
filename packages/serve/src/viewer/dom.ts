/** Children of an element: nodes, text, or nothing. */
export type Child = Node | string | null | undefined | false;

/** Creates `<tag>` with attributes (`class`, `data-*`, …) and children; text is never parsed as HTML. */
export function h(
  tag: string,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs))
    if (value !== undefined) element.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

/** A `<details>` block, closed, with `summary` as its title. */
export function collapsed(summary: string, body: Child, className = ""): HTMLElement {
  return h("details", { class: className }, h("summary", {}, summary), body);
}

/** `n` with thousands separators. */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** A long id shortened for display: its first 8 and last 4 characters. */
export function short(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

/** Ctrl+Enter (Cmd+Enter on a Mac) in `textarea` submits `form`; Enter alone is a new line. */
export function sendOnCtrlEnter(textarea: HTMLTextAreaElement, form: HTMLFormElement): void {
  textarea.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.isComposing) return;
    event.preventDefault();
    form.requestSubmit();
  });
}

/**
 * A labelled message box: `<label>`, the textarea, and a hint it is described by (how to send).
 * Returns the parts so the caller places them in its form.
 */
export function messageBox(
  id: string,
  label: string,
  placeholder: string,
): { label: HTMLElement; textarea: HTMLTextAreaElement; hint: HTMLElement } {
  const hint = h("span", { class: "hint", id: `${id}-hint` }, "Ctrl+Enter (⌘+Enter) sends");
  const textarea = h("textarea", {
    id,
    name: id,
    rows: "3",
    placeholder,
    "aria-describedby": hint.id,
  }) as HTMLTextAreaElement;
  return { label: h("label", { for: id, class: "compose-label" }, label), textarea, hint };
}
