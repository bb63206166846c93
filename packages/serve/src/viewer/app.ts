import { ApiError, api, setToken } from "./api.js";
import { h } from "./dom.js";
import { listPage } from "./list-page.js";
import { sessionPage } from "./session-page.js";
import type { TreeNode } from "./session-tree.js";

// The session viewer of `podkit serve`: `#/` lists sessions (sub-pods under their parent),
// `#/sessions/<id>` streams one, with the tree of sub-pods it belongs to and its pending approvals
// (Allow/Deny).

const root = document.getElementById("main") as HTMLElement;
let leave: (() => void) | undefined;

async function route(): Promise<void> {
  leave?.();
  leave = undefined;
  const match = /^#\/sessions\/([A-Za-z0-9_-]{1,128})$/.exec(location.hash);
  try {
    if (match !== null) {
      // Asked first, so a missing token or an unknown session shows before any stream opens.
      const view = await api<{ tree: TreeNode }>(`/sessions/${match[1]}`);
      leave = sessionPage(root, match[1] as string, view.tree);
    } else await listPage(root);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) askForToken();
    else
      root.replaceChildren(
        h("p", { class: "problem" }, String(error instanceof Error ? error.message : error)),
      );
  }
}

/** A server beyond loopback needs its token; it is kept for this tab only. */
function askForToken(): void {
  const input = h("input", { id: "token", type: "password", autocomplete: "off" }) as HTMLInputElement;
  const form = h(
    "form",
    { class: "token" },
    h("label", {}, "PODKIT_SERVE_TOKEN ", input),
    h("button", { type: "submit" }, "Use"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    setToken(input.value);
    void route();
  });
  root.replaceChildren(h("p", {}, "This server needs its token."), form);
}

window.addEventListener("hashchange", () => void route());
void route();
