import { ApiError } from "./api.js";
import { h } from "./dom.js";

/** A file in a rewind's report (`POST /sessions/:id/rewind`); `from`/`to` are digests, null: absent. */
export interface RewindFile {
  path: string;
  action: "write" | "delete" | "unchanged";
  from: string | null;
  to: string | null;
}

/** A file changed outside the pod, which a rewind overwrites only when forced. */
export interface RewindRefusal {
  path: string;
  recorded: string | null;
  current: string | null;
}

/** What a rewind did, or (a dry run) would do. */
export interface RewindReport {
  toTurn: number;
  dryRun: boolean;
  conversation: { action: "fork" | "unchanged" | "skipped"; headSegmentId?: string };
  files: RewindFile[];
  refused?: RewindRefusal[];
}

/** Asks the server for a rewind of the session: a dry run, or the real one. */
export type RewindRequest = (body: {
  toTurn: number;
  dryRun?: boolean;
  force?: boolean;
}) => Promise<RewindReport>;

/**
 * "Rewind to here" for turn `turn`, in a modal dialog (focus stays in it; Escape or Cancel closes
 * it): it first asks the server what the rewind would do (a dry run) and lists it — the files it
 * would restore or remove, and the files edited outside the pod, which it overwrites only when the
 * person ticks "Overwrite them" — then rewinds when the person confirms. Resolves with the
 * rewind's report, or undefined when the person cancels.
 */
export function confirmRewind(turn: number, request: RewindRequest): Promise<RewindReport | undefined> {
  const status = h("p", { id: "rewind-status", role: "status" }, "Checking what a rewind would change…");
  const plan = h("div", { id: "rewind-plan" });
  const confirm = h(
    "button",
    { type: "submit", class: "rewind-confirm", id: "rewind-confirm", disabled: "" },
    h("span", { "aria-hidden": "true" }, "↶ "),
    `Rewind to turn ${turn}`,
  ) as HTMLButtonElement;
  const cancel = h("button", { type: "button", class: "secondary", id: "rewind-cancel" }, "Cancel");
  const form = h(
    "form",
    { class: "rewind-form" },
    h("h2", { id: "rewind-title" }, `Rewind to the end of turn ${turn}?`),
    status,
    plan,
    h("div", { class: "dialog-buttons" }, confirm, cancel),
  ) as HTMLFormElement;
  const dialog = h(
    "dialog",
    { id: "rewind-dialog", "aria-labelledby": "rewind-title", "aria-describedby": "rewind-status" },
    form,
  ) as HTMLDialogElement;
  document.body.append(dialog);

  let force: HTMLInputElement | undefined;
  let sending = false;
  let done: RewindReport | undefined;
  /** The refused files, and "Overwrite them": the confirm button waits for it. */
  const askForce = (refused: readonly RewindRefusal[]): HTMLElement => {
    const { block, box } = refusedBlock(refused);
    force = box;
    confirm.disabled = true;
    box.addEventListener("change", () => {
      confirm.disabled = !box.checked;
    });
    return block;
  };
  const fail = (error: unknown) => {
    status.textContent =
      error instanceof ApiError
        ? `The server refused: ${error.message} (${error.status})`
        : `The server could not be asked: ${error instanceof Error ? error.message : String(error)}`;
    status.classList.add("problem");
  };
  /** Draws what the rewind would do; the confirm button waits for "force" while files would be overwritten. */
  const show = (report: RewindReport) => {
    const changed = report.files
      .filter((file) => file.action !== "unchanged")
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const refused = report.refused ?? [];
    const nothing = report.conversation.action !== "fork" && changed.length === 0;
    status.classList.remove("problem");
    status.textContent = nothing
      ? `Nothing would change: the session is at turn ${turn} and no file it changed differs.`
      : `A rewind would ${summary(report, changed)}.`;
    force = undefined;
    plan.replaceChildren(
      report.conversation.action === "fork"
        ? h(
            "p",
            { class: "rewind-conversation" },
            `The conversation goes back to the end of turn ${turn}: the next message continues from there. The turns after it stay in the store as another branch.`,
          )
        : "",
      changed.length === 0
        ? ""
        : h(
            "ul",
            { id: "rewind-files", class: "rewind-files", "aria-label": "Files the rewind changes" },
            ...changed.map((file) =>
              h(
                "li",
                { "data-path": file.path, "data-action": file.action },
                file.action === "delete" ? "remove " : "restore ",
                h("code", {}, file.path),
              ),
            ),
          ),
    );
    confirm.disabled = nothing;
    if (refused.length > 0) plan.append(askForce(refused));
    (force ?? (confirm.disabled ? cancel : confirm)).focus();
  };

  return new Promise((resolve) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (sending || confirm.disabled) return;
      sending = true;
      confirm.setAttribute("aria-disabled", "true");
      status.classList.remove("problem");
      status.textContent = `Rewinding to turn ${turn}…`;
      request({ toTurn: turn, ...(force?.checked === true ? { force: true } : {}) }).then(
        (report) => {
          done = report;
          dialog.close();
        },
        (error: unknown) => {
          sending = false;
          confirm.removeAttribute("aria-disabled");
          const body = (error instanceof ApiError ? error.body : undefined) as
            | { refused?: RewindRefusal[] }
            | undefined;
          // Someone edited a file since the dry run: say which, and ask for "force" again.
          if (Array.isArray(body?.refused)) {
            plan.querySelector("#rewind-refused")?.remove();
            plan.append(askForce(body.refused));
          }
          fail(error);
          (force ?? confirm).focus();
        },
      );
    });
    cancel.addEventListener("click", () => dialog.close());
    // Escape closes the dialog, except while the rewind is on its way: it cannot be called back.
    dialog.addEventListener("cancel", (event) => {
      if (sending) event.preventDefault();
    });
    dialog.addEventListener(
      "close",
      () => {
        dialog.remove();
        resolve(done);
      },
      { once: true },
    );
    dialog.showModal();
    cancel.focus();
    request({ toTurn: turn, dryRun: true }).then(show, (error: unknown) => {
      fail(error);
      cancel.focus();
    });
  });
}

/** "restore 2 files and remove 1, and take the conversation back". */
function summary(report: RewindReport, changed: readonly RewindFile[]): string {
  const restored = changed.filter((file) => file.action === "write").length;
  const removed = changed.length - restored;
  const parts: string[] = [];
  if (report.conversation.action === "fork")
    parts.push(`take the conversation back to turn ${report.toTurn}`);
  if (restored > 0) parts.push(`restore ${restored} file${restored === 1 ? "" : "s"}`);
  if (removed > 0) parts.push(`remove ${removed} file${removed === 1 ? "" : "s"}`);
  const refused = report.refused?.length ?? 0;
  const text = parts.length > 1 ? `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}` : (parts[0] ?? "");
  return refused === 0
    ? text
    : `${text}, overwriting ${refused} file${refused === 1 ? "" : "s"} edited outside the pod`;
}

/**
 * The files edited outside the pod since the session last wrote them, and the checkbox (`box`)
 * that lets the rewind overwrite them.
 */
function refusedBlock(refused: readonly RewindRefusal[]): { block: HTMLElement; box: HTMLInputElement } {
  const box = h("input", {
    type: "checkbox",
    id: "rewind-force",
    name: "force",
    "aria-describedby": "rewind-refused-why",
  }) as HTMLInputElement;
  const block = h(
    "div",
    { class: "rewind-refused", id: "rewind-refused" },
    h(
      "p",
      { id: "rewind-refused-why" },
      `${refused.length === 1 ? "This file was" : "These files were"} changed outside the pod since the session last wrote ${refused.length === 1 ? "it" : "them"}. The rewind overwrites ${refused.length === 1 ? "it" : "them"} only if you say so, and what ${refused.length === 1 ? "it holds" : "they hold"} now is lost:`,
    ),
    h(
      "ul",
      { id: "rewind-refused-files", "aria-label": "Files changed outside the pod" },
      ...refused.map((refusal) =>
        h(
          "li",
          { "data-path": refusal.path },
          h("code", {}, refusal.path),
          refusal.current === null ? " (deleted)" : "",
        ),
      ),
    ),
    h(
      "p",
      { class: "rewind-force" },
      box,
      " ",
      h("label", { for: "rewind-force" }, "Overwrite them (force)"),
    ),
  );
  return { block, box };
}
