import { h, sendOnCtrlEnter } from "./dom.js";

/**
 * Asks for the optional reason of a Deny in a modal dialog (focus stays in it; Escape or Cancel
 * closes it): resolves with the reason (`""` for none) when the person confirms — the button, or
 * Ctrl+Enter in the box — or undefined when they cancel.
 */
export function askDenyReason(what: string): Promise<string | undefined> {
  const reason = h("textarea", {
    id: "deny-reason",
    name: "reason",
    rows: "3",
    maxlength: "4000",
    "aria-describedby": "deny-reason-hint",
  }) as HTMLTextAreaElement;
  const cancel = h("button", { type: "button", class: "secondary", id: "deny-cancel" }, "Cancel");
  const form = h(
    "form",
    { class: "deny-form" },
    h("h2", { id: "deny-title" }, `Deny ${what}?`),
    h("label", { for: "deny-reason" }, "Reason (optional) — the model reads it"),
    reason,
    h("p", { class: "hint", id: "deny-reason-hint" }, "Ctrl+Enter (⌘+Enter) denies · Escape cancels"),
    h(
      "div",
      { class: "dialog-buttons" },
      h("button", { type: "submit", class: "deny", id: "deny-confirm" }, "✗ Deny"),
      cancel,
    ),
  ) as HTMLFormElement;
  const dialog = h(
    "dialog",
    { id: "deny-dialog", "aria-labelledby": "deny-title" },
    form,
  ) as HTMLDialogElement;
  document.body.append(dialog);
  sendOnCtrlEnter(reason, form);
  return new Promise((resolve) => {
    let confirmed = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      confirmed = true;
      dialog.close();
    });
    cancel.addEventListener("click", () => dialog.close());
    dialog.addEventListener(
      "close",
      () => {
        dialog.remove();
        resolve(confirmed ? reason.value.trim() : undefined);
      },
      { once: true },
    );
    dialog.showModal();
    reason.focus();
  });
}
