import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { entriesOf, openSse } from "../../serve/test/support/sse-client.js";
import { startServe } from "./support/serve-process.js";
import { doubleWorkspace } from "./support/workspace.js";

// The session viewer of `podkit serve` in a real browser: Debian's chromium (/usr/bin/chromium,
// installed by .ci/run) driven by playwright-core, against a real `podkit serve` process whose
// pods talk to the provider double.

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
const ANSWER = "The readme says hello. It is one line long, and that line greets whoever reads it.";

let double: ProviderDouble;
let ws: { root: string; workspace: string; home: string };
let browser: BrowserContext | undefined;
let profile: string | undefined;
beforeEach(async () => {
  double = await startProviderDouble({ wire: "anthropic" });
  ws = await doubleWorkspace(double.baseUrl);
  await writeFile(join(ws.workspace, "README.md"), "hello\n");
  await mkdir(SHOTS, { recursive: true });
});
afterEach(async () => {
  await browser?.close();
  browser = undefined;
  if (profile !== undefined) await rm(profile, { recursive: true, force: true });
  profile = undefined;
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

/** Chromium with the flags CI uses and a fresh profile. */
async function openBrowser(): Promise<Page> {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`).toBe(true);
  profile = await mkdtemp(join(tmpdir(), "podkit-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1100, height: 900 },
  });
  return browser.pages()[0] ?? (await browser.newPage());
}

/** The answer text of the preview (the reasoning's text sits inside its collapsed block). */
const draftText = (page: Page) =>
  page.$eval("#draft", (el) => el.querySelector(":scope > .text")?.textContent ?? "").catch(() => "");

/**
 * Waits (bounded) until the preview's answer text is non-empty and starts with `prefix`. Polled
 * from here: the viewer's Content-Security-Policy forbids the eval that page.waitForFunction uses.
 */
async function previewShows(page: Page, prefix: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const text = await draftText(page);
    if (text.length > 0 && text.startsWith(prefix)) return;
    if (Date.now() > deadline) throw new Error(`the preview never showed "${prefix}…" (it shows "${text}")`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("the session viewer in a real browser", () => {
  it("streams an answer in, resumes it after a reload without gaps or duplicates, and interrupts a run", async () => {
    double.enqueue(
      {
        parts: [
          { type: "reasoning", text: "The user asks about the readme; read it first.", signature: "sig" },
          { type: "tool_call", name: "read_file", arguments: { path: "README.md" } },
        ],
        usage: { inputTokens: 2400, outputTokens: 60, cacheReadTokens: 2000 },
      },
      // The answer streams a few words, then holds for a while: the page is reloaded meanwhile.
      {
        parts: [{ type: "text", text: ANSWER, chunkSize: 6 }],
        fault: { kind: "stall", afterEvents: 8, ms: 12_000 },
      },
    );
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" }, ["--yes"]);
    try {
      const page = await openBrowser();
      const resumedFrom: (string | undefined)[] = [];
      page.on("request", (request) => {
        if (request.url().includes("/events")) resumedFrom.push(request.headers()["last-event-id"]);
      });
      await page.goto(`${serve.url}/`);
      await page.fill("#message", "What does the readme say?");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      const sessionId = new URL(page.url()).hash.slice("#/sessions/".length);

      // The answer streams in: part of it shows before it is committed.
      await previewShows(page, "");
      const partial = await draftText(page);
      expect(ANSWER.startsWith(partial) && partial.length < ANSWER.length, partial).toBe(true);
      await page.waitForSelector(".entry-tool_result"); // the tool call's outcome, committed before

      await page.screenshot({ path: join(SHOTS, "session-streaming.png"), fullPage: true });

      // Reload mid-run: what was received is drawn again and the stream resumes after it.
      await page.reload();
      await page.waitForSelector("#session[data-live='true']");
      await previewShows(page, partial);
      await page.waitForSelector(".entry-run_completed", { timeout: 40_000 });
      expect(resumedFrom.at(-1), "the reloaded page resumed after its last entry").toMatch(
        /^[0-9a-f-]{36}:\d+:/,
      );
      expect(await page.textContent(".assistant .text")).toBe(ANSWER);
      await page.screenshot({ path: join(SHOTS, "session-answered.png"), fullPage: true });

      const shown = await page.$$eval("[data-entry-id]", (els) =>
        els.map((el) => el.getAttribute("data-entry-id")),
      );
      const replay = await openSse(`${serve.url}/sessions/${sessionId}/events`);
      await replay.waitFor((event) => event.event === "live");
      replay.close();
      expect(shown, "every committed entry once, in order").toEqual(
        entriesOf(replay.events).map((e) => e.id),
      );

      // Interrupt a run from the page while its tool call runs.
      double.enqueue({ parts: [{ type: "tool_call", name: "bash", arguments: { command: "sleep 30" } }] });
      await page.fill("#message", "Wait a while.");
      await page.click("#send");
      await page.waitForSelector("#interrupt:not([hidden])");
      await page.waitForSelector(".tool-head:has-text('bash')");
      await page.click("#interrupt");
      await page.waitForSelector("#session[data-running='false']", { timeout: 10_000 });
      const ends = await page.$$eval(".entry-run_completed, .entry-run_errored", (els) =>
        els.map((el) => el.className),
      );
      expect(ends).toHaveLength(2);
      expect(ends[1]).toMatch(/interrupted|error/);
      await page.screenshot({ path: join(SHOTS, "session-interrupted.png"), fullPage: true });

      const after = await openSse(`${serve.url}/sessions/${sessionId}/events`);
      await after.waitFor((event) => event.event === "live");
      after.close();
      const last = entriesOf(after.events).at(-1)?.entry;
      expect(last?.kind === "run_errored" || last?.interrupted === true, JSON.stringify(last)).toBe(true);
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 180_000);

  it("shows a pending approval with Allow/Deny; Allow is logged with who and the run goes on, running the call once", async () => {
    double.enqueue(
      { parts: [{ type: "tool_call", name: "bash", arguments: { command: "echo ran >> ran.txt" } }] },
      { parts: [{ type: "text", text: "It ran." }] },
    );
    // No --yes: the served pod leaves the bash call pending for a person.
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openBrowser();
      await page.goto(`${serve.url}/`);
      await page.fill("#message", "Run the script.");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      await page.waitForSelector(".approval.pending button.allow");
      await page.waitForSelector(".entry-run_completed.awaiting_approval, .entry-run_completed");
      const ran = () => readFile(join(ws.workspace, "ran.txt"), "utf8").catch(() => "");
      expect(await ran()).toBe("");
      await page.screenshot({ path: join(SHOTS, "session-approval.png"), fullPage: true });

      await page.click(".approval.pending button.allow");
      await page.waitForSelector(".approval-answer.allowed");
      await page.waitForSelector(".approval.allowed");
      expect(await page.$$(".approval button")).toHaveLength(0);
      const deadline = Date.now() + 20_000;
      while ((await page.$$(".entry-run_completed")).length < 2) {
        if (Date.now() > deadline) throw new Error("the run never went on after the answer");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await page.textContent(".approval-answer.allowed")).toMatch(/allowed by \S+/);
      expect(await ran()).toBe("ran\n");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 120_000);
});
