let pending: string[] = [];
let timer: number | undefined;

/**
 * Says `text` to a screen reader through the page's live region (`#announcer` in index.html,
 * `aria-live="assertive"`). The region is cleared first, so the same words said twice are
 * announced twice; what is said within a moment is said together.
 */
export function announce(text: string): void {
  const region = document.getElementById("announcer");
  if (region === null) return;
  pending.push(text);
  if (timer !== undefined) return;
  region.textContent = "";
  timer = window.setTimeout(() => {
    timer = undefined;
    region.textContent = pending.join(" ");
    pending = [];
  }, 50);
}
