import { ApiError, api, setToken, token } from "./api.js";
import { h } from "./dom.js";
import { evalComparePage } from "./eval-compare-page.js";
import { listPage } from "./list-page.js";
import { sessionPage } from "./session-page.js";
import type { TreeNode } from "./session-tree.js";

// The session viewer of `podkit serve`: `#/` lists sessions (sub-pods under their parent),
// `#/sessions/<id>` streams one, with the tree of sub-pods it belongs to and its pending approvals
// (Allow/Deny); `#/sessions/<id>/compare` shows an eval item beside the session it replayed.

const root = document.getElementById("main") as HTMLElement;
const identityBox = document.getElementById("identity") as HTMLElement;
let leave: (() => void) | undefined;
/** Who the server takes this tab for (`GET /identity`), asked once per token. */
let identity: { holder: string | null; answersRecordedAs: string } | undefined;

async function route(): Promise<void> {
  leave?.();
  leave = undefined;
  const match = /^#\/sessions\/([A-Za-z0-9_-]{1,128})$/.exec(location.hash);
  const compare = /^#\/sessions\/([A-Za-z0-9_-]{1,128})\/compare$/.exec(location.hash);
  document.title =
    compare !== null
      ? `podkit · eval item ${compare[1]} beside its original`
      : match === null
        ? "podkit · sessions"
        : `podkit · session ${match[1]}`;
  const context = {
    answersAs: undefined as string | undefined,
    onUnauthorized: () => askForToken(),
    reload: () => route(),
  };
  try {
    // Asked first, so a missing or wrong token shows before anything else is asked.
    identity ??= await api<{ holder: string | null; answersRecordedAs: string }>("/identity");
    context.answersAs = identity.answersRecordedAs;
    identityBox.textContent = `answers recorded as ${identity.answersRecordedAs}`;
    if (compare !== null) leave = await evalComparePage(root, compare[1] as string);
    else if (match !== null) {
      // Asked before any stream opens, so an unknown session shows as such.
      const view = await api<{ tree: TreeNode }>(`/sessions/${match[1]}`);
      leave = sessionPage(root, match[1] as string, view.tree, context);
    } else leave = await listPage(root, context);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) askForToken();
    else showFailure(error, match?.[1]);
  }
}

/** A failure the person can act on, said in words: an unknown session, a server gone, another error. */
function showFailure(error: unknown, sessionId: string | undefined): void {
  let text: string;
  if (error instanceof ApiError && error.status === 404 && sessionId !== undefined) {
    text = `There is no session ${sessionId} in this server's store.`;
  } else if (error instanceof TypeError) {
    text = "The server cannot be reached: is `podkit serve` still running? Reload the page once it is.";
  } else {
    text = error instanceof ApiError ? `${error.status}: ${error.message}` : String(error);
  }
  root.replaceChildren(
    h(
      "section",
      { id: "failure" },
      h("h1", {}, "Something is in the way"),
      h("p", { class: "problem", role: "alert" }, text),
      h("p", {}, h("a", { href: "#/" }, "Back to the sessions")),
    ),
  );
}

/**
 * A server beyond loopback (or started with tokens) needs one: the page says so — and, when the
 * token it holds was refused, that it was — and asks for it. It is kept for this tab only.
 */
function askForToken(): void {
  leave?.();
  leave = undefined;
  identity = undefined;
  identityBox.textContent = "";
  const refused = token() !== null;
  const input = h("input", {
    id: "token",
    name: "token",
    type: "password",
    autocomplete: "off",
    required: "",
    "aria-describedby": "token-help",
  }) as HTMLInputElement;
  const form = h(
    "form",
    { class: "token", id: "token-form" },
    h("label", { for: "token" }, "Token"),
    input,
    h("button", { type: "submit" }, "Use this token"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim() === "") return;
    setToken(input.value.trim());
    void route();
  });
  root.replaceChildren(
    h(
      "section",
      { id: "token-needed", "data-refused": String(refused) },
      h("h1", {}, refused ? "That token was not accepted" : "This server needs a token"),
      h(
        "p",
        { class: refused ? "problem" : "", role: "alert" },
        refused
          ? "The server refused the token this tab was using: it may have a typo, or have been changed or revoked. Enter it again, or ask whoever runs the server for yours."
          : "Enter the token you were given: the server's PODKIT_SERVE_TOKEN, or your own from its tokens file.",
      ),
      h(
        "p",
        { id: "token-help", class: "hint" },
        "It is sent with every request and kept for this tab only. With a token of your own, your approvals are recorded under your name.",
      ),
      form,
    ),
  );
  input.focus();
}

window.addEventListener("hashchange", () => void route());
void route();
