import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { Item } from "@podkit/llm-worker";
import { loadManifest } from "@podkit/manifest";
import { EVAL_ORIGIN_DOMAIN, openWorkspaceFsStore, runEval } from "@podkit/pod";
import { SessionLog } from "@podkit/session-store";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startServe } from "./support/serve-process.js";
import { doubleWorkspace } from "./support/workspace.js";

// The viewer shows an eval item beside the session it replayed (docs/evals.md, docs/serve.md):
// Debian's chromium (/usr/bin/chromium) driven by playwright-core against a real `podkit serve`
// process. The recording is made through the server against one provider double; `runEval`
// replays it against another that calls other tools and answers otherwise.

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const SHOTS = join(import.meta.dirname, "..", "test-results", "screenshots");
const DOCS = join(import.meta.dirname, "..", "..", "..", "docs");
const QUESTION = "What does the readme say?";
const RECORDED_ANSWER = "The readme says hello, and nothing more.";
const ITEM_ANSWER = "The readme says hello.";

let browser: Browser;
let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
let context: BrowserContext | undefined;
beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`).toBe(true);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await doubleWorkspace(double.baseUrl);
  await writeFile(join(ws.workspace, "README.md"), "hello\n");
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

async function openPage(): Promise<Page> {
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  return context.newPage();
}

/** Fails on any axe-core violation of impact "serious" or "critical", naming rule and elements. */
async function expectAccessible(page: Page, where: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad, `accessibility of ${where}`).toEqual([]);
}

/** The workspace's store, as the served pods and `runEval` open it. */
async function workspaceStore() {
  const manifest = await loadManifest({ env: { cwd: ws.workspace, home: ws.home, env: {} } });
  return { manifest, store: openWorkspaceFsStore(manifest.dataDir) };
}

/** Replays `source` against a double that reads with other arguments, greps too, and answers otherwise. */
async function replayWithOtherModel(source: string): Promise<string> {
  const variant = await startProviderDouble({ wire: "anthropic" });
  const { manifest, store } = await workspaceStore();
  try {
    variant.enqueue(
      {
        parts: [
          { type: "tool_call", name: "read_file", arguments: { path: "./README.md" } },
          { type: "tool_call", name: "grep", arguments: { pattern: "hello" } },
        ],
      },
      { parts: [{ type: "text", text: ITEM_ANSWER }] },
    );
    const report = await runEval({
      cases: [{ sessionId: source }],
      store,
      variant: { manifest, model: variant.baseUrl },
      podOptions: { env: { ANTHROPIC_API_KEY: "test-key" }, onWarning: () => {} },
      evalId: "browser",
    });
    return report.items[0]?.sessionId as string;
  } finally {
    await store.close();
    await variant.close();
  }
}

describe("an eval item beside its original in the viewer", () => {
  it("links the item's page to a side-by-side view with the answers' diff, the tool calls matched and the scores", async () => {
    double.enqueue(
      { parts: [{ type: "tool_call", name: "read_file", arguments: { path: "README.md" } }] },
      { parts: [{ type: "text", text: RECORDED_ANSWER }] },
    );
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" }, ["--yes"]);
    try {
      const recorded = await fetch(`${serve.url}/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: QUESTION, wait: true }),
      });
      expect(recorded.status).toBe(200);
      const { sessionId: source } = (await recorded.json()) as { sessionId: string };
      const item = await replayWithOtherModel(source);

      const page = await openPage();
      // A plain session offers no comparison.
      await page.goto(`${serve.url}/#/sessions/${source}`);
      await page.waitForSelector("#session[data-live='true']");
      expect(await page.isHidden("#compare-link")).toBe(true);

      await page.goto(`${serve.url}/#/sessions/${item}`);
      await page.waitForSelector("#compare-link:not([hidden])");
      await page.click("#compare-link");
      await page.waitForURL(new RegExp(`#/sessions/${item}/compare$`));
      await page.waitForSelector("#eval-compare .compare-turn");
      expect(await page.title()).toContain("beside its original");

      // The origin, with a link to the original.
      expect(await page.textContent("#eval-origin")).toContain("browser");
      expect(await page.getAttribute(`#eval-origin a[href='#/sessions/${source}']`, "href")).toBe(
        `#/sessions/${source}`,
      );
      // Both sides of the turn, side by side.
      expect(await page.textContent("#turn-1-original .compare-answer")).toBe(RECORDED_ANSWER);
      expect(await page.textContent("#turn-1-item .compare-answer")).toBe(ITEM_ANSWER);
      const [left, right] = await Promise.all([
        page.locator("#turn-1-original").boundingBox(),
        page.locator("#turn-1-item").boundingBox(),
      ]);
      expect(left && right && left.x < right.x && Math.abs(left.y - right.y) < 2).toBe(true);
      // The answers' diff: what only the original says is struck out, and says so in words.
      const removed = await page.$$eval("#turn-1-answer del", (els) => els.map((el) => el.textContent ?? ""));
      expect(removed.join("")).toContain("[original only:");
      expect(removed.join("")).toContain("nothing more");
      expect(await page.textContent("#turn-1-answer .diff-summary")).toMatch(/only in the original/);
      // The tool calls, matched: read_file with other arguments, grep only in the item.
      const rows = await page.$$eval("#turn-1-calls tbody tr", (els) =>
        els.map((el) => [el.getAttribute("data-tool"), el.getAttribute("data-change"), el.textContent ?? ""]),
      );
      expect(rows.map(([tool, change]) => [tool, change])).toEqual([
        ["read_file", "changed"],
        ["grep", "added"],
      ]);
      expect(rows[0]?.[2]).toContain('{"path":"./README.md"}');
      // The scores beside the baseline's.
      expect(await page.textContent("#scores tr[data-scorer='answer']")).toMatch(/FAIL/);
      // docs/serve-viewer-eval-compare.png is this picture; PODKIT_DOC_SCREENSHOTS=1 writes it again.
      const docShot = process.env.PODKIT_DOC_SCREENSHOTS === "1" ? DOCS : SHOTS;
      await page
        .locator("#eval-compare")
        .screenshot({ path: join(docShot, "serve-viewer-eval-compare.png") });
      await expectAccessible(page, "the compare page");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 180_000);

  it("says so on the page when the original is not in the store, and still shows the item", async () => {
    const { store } = await workspaceStore();
    const gone = "01900000-0000-7000-8000-00000000dead";
    let item: string;
    try {
      const log = await SessionLog.create<Item>(store, { systemPrompt: "S", config: {}, history: [] });
      await log.append({
        kind: "extension",
        domain: EVAL_ORIGIN_DOMAIN,
        payload: { source_session: gone, from_turn: 1, to_turn: 1, variant: {}, eval_id: "orphan" },
      });
      item = log.sessionId;
    } finally {
      await store.close();
    }
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/#/sessions/${item}/compare`);
      await page.waitForSelector("#source-problem");
      expect(await page.textContent("#source-problem")).toContain(
        `The original session ${gone} is not in this server's store`,
      );
      expect(await page.textContent("#eval-origin")).toContain("orphan");
      await expectAccessible(page, "the compare page without its original");

      // A session that is not an eval item: the page says so.
      await page.goto(`${serve.url}/#/sessions/${gone}/compare`);
      await page.waitForSelector("#compare-problem");
      expect(await page.textContent("#compare-problem")).toContain(`no such session: ${gone}`);
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 120_000);
});
