import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT, runBin } from "./run-bin.js";
import { startServe } from "./support/serve-process.js";
import { type StreamGate, startStreamGate } from "./support/stream-gate.js";
import { doubleWorkspace, sessionEntries } from "./support/workspace.js";

// The session viewer as a person uses it (issue 38): what waits for approval is shown in full,
// Allow and Deny differ and Deny asks for a reason, a new approval is scrolled to and announced,
// a call's result comes after its approval, the answer is credited to whoever clicked, inputs are
// labelled and Ctrl+Enter sends, the list refreshes live, a token problem says what to do — with
// the keyboard alone, and with axe-core failing the test on any serious or critical violation.
// Debian's chromium driven by playwright-core against real `podkit serve` processes; every wait
// is on a condition (bounded), never a fixed time, so the file passes on a busy machine.

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
const DOCS = join(REPO_ROOT, "docs");
const ALICE_TOKEN = "alice-5f0c2a9e8d7b6a5f4e3d2c1b";

/** A bash command longer than any one-line summary: the page must show every line of it. */
const COMMAND = [
  "# rotate the logs, then note that it ran",
  ...Array.from(
    { length: 8 },
    (_, i) =>
      `printf '%s\\n' "step ${i + 1}: a line long enough that a one-line summary would have cut it" > /dev/null`,
  ),
  "echo ran >> ran.txt",
].join("\n");
const PLAN = "# Plan\n\n1. read the logs\n2. rotate them\n3. tell the team\n";
const REASON = "not before the release: ask again on Monday";

let browser: Browser;
let double: ProviderDouble;
let gate: StreamGate;
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
  gate = await startStreamGate(double.baseUrl);
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  await gate.close();
  await double.close();
  await rm(ws.root, { recursive: true, force: true });
});

const env = () => ({ HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });

async function openPage(height = 900): Promise<Page> {
  context = await browser.newContext({ viewport: { width: 1100, height } });
  return context.newPage();
}

/** Polls `check` (run from here: the viewer's CSP forbids page.waitForFunction) until it holds. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Fails on any axe-core violation of impact "serious" or "critical", naming rule and elements. */
async function expectAccessible(page: Page, where: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad, `accessibility of ${where}`).toEqual([]);
}

// Page functions reach the document through an element: this file is compiled without the DOM lib.
const focused = (page: Page, selector: string) =>
  page.$eval("body", (body, sel) => body.ownerDocument.activeElement?.matches(sel) ?? false, selector);

/** Presses Tab until `selector` has the focus; returns what had it on the way (by class or id). */
async function tabTo(page: Page, selector: string, max = 80): Promise<string[]> {
  const passed: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await focused(page, selector)) return passed;
    passed.push(
      await page.$eval("body", (body) => {
        const el = body.ownerDocument.activeElement;
        return el === null
          ? ""
          : `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${[...el.classList].join(".")}`;
      }),
    );
  }
  throw new Error(`Tab never reached ${selector}; it went through ${passed.join(" ")}`);
}

/** True when the element's box is (at least partly) inside the viewport. */
const inView = (page: Page, selector: string) =>
  page
    .$eval(selector, (el) => {
      const box = el.getBoundingClientRect();
      return box.bottom > 0 && box.top < (el.ownerDocument.defaultView?.innerHeight ?? 0);
    })
    .catch(() => false);

const scrollY = (page: Page) => page.$eval("body", (body) => body.ownerDocument.defaultView?.scrollY ?? 0);

const sessionIdOf = (page: Page) => new URL(page.url()).hash.slice("#/sessions/".length);

describe("the session viewer as a person uses it", () => {
  it("a token names who answers: the page asks for it and says when it is wrong; an approval shows the whole command, is scrolled to and announced, and Allow is credited to the holder, the result drawn after it", async () => {
    ws = await doubleWorkspace(gate.url);
    const tokens = join(ws.root, "tokens");
    await writeFile(tokens, `# who may use this server\nalice ${ALICE_TOKEN}\n`, { mode: 0o600 });
    const serve = await startServe(ws.workspace, env(), ["--tokens-file", tokens]);
    try {
      const page = await openPage(700);
      await page.goto(`${serve.url}/`);

      // No token yet: the page says what it needs, instead of a blank page.
      await page.waitForSelector("#token-needed[data-refused='false']");
      expect(await page.textContent("#token-needed h1")).toBe("This server needs a token");
      expect(await page.textContent("#token-needed [role='alert']")).toMatch(
        /Enter the token you were given/,
      );
      expect(await focused(page, "#token")).toBe(true);
      await expectAccessible(page, "the token page");
      // A wrong one: the page says it was refused and what to do.
      await page.getByLabel("Token").fill(`${ALICE_TOKEN}x`);
      await page.keyboard.press("Enter");
      await page.waitForSelector("#token-needed[data-refused='true']");
      expect(await page.textContent("#token-needed h1")).toBe("That token was not accepted");
      expect(await page.textContent("#token-needed [role='alert']")).toMatch(/ask whoever runs the server/);
      // The right one: the list, and who answers are recorded as.
      await page.getByLabel("Token").fill(ALICE_TOKEN);
      await page.keyboard.press("Enter");
      await page.waitForSelector("#list[data-live='true']");
      expect(await page.textContent("#identity")).toBe("answers recorded as alice");

      // A first turn with a long answer, so the page is taller than the window.
      const story = Array.from({ length: 80 }, (_, i) => `Line ${i + 1} of a long answer.`).join("\n");
      double.enqueue({ parts: [{ type: "text", text: story }] });
      await page.getByLabel("Start a session").fill("Tell me a long story.");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      const sessionId = sessionIdOf(page);
      await page.waitForSelector(".entry-run_completed");

      // The next response (the bash call) is held until the page is scrolled to the top.
      const held = gate.hold(1, 0);
      double.enqueue(
        { parts: [{ type: "tool_call", id: "toolu_rotate", name: "bash", arguments: { command: COMMAND } }] },
        { parts: [{ type: "text", text: "Rotated." }] },
      );
      await page.getByLabel("Message the pod").fill("Rotate the logs.");
      await page.click("#send");
      await held.held;
      await page.$eval("body", (body) => body.ownerDocument.defaultView?.scrollTo(0, 0));
      expect(await scrollY(page)).toBe(0);
      expect(await page.$(".approval")).toBeNull();
      held.release();

      // It arrives below the fold: the page scrolls to it and announces it.
      const pending = ".approval.pending[data-call-id='toolu_rotate']";
      await page.waitForSelector(pending, { timeout: 60_000 });
      await until("the approval is scrolled into view", () => inView(page, pending));
      expect(await scrollY(page)).toBeGreaterThan(0);
      await until("the approval is announced", async () =>
        ((await page.textContent("#announcer")) ?? "").startsWith(
          "Approval needed: bash — # rotate the logs",
        ),
      );
      expect(await page.getAttribute("#announcer", "aria-live")).toBe("assertive");

      // The whole command, not folded away.
      const command = page.locator(`${pending} [data-arg='command']`);
      expect(await command.textContent()).toBe(COMMAND);
      expect(await command.isVisible()).toBe(true);
      expect(await command.evaluate((el) => el.closest("details"))).toBeNull();
      // Allow and Deny look different (fill, colour, border and mark), and say who answers.
      const look = (selector: string) =>
        page.$eval(selector, (el) => {
          const style = el.ownerDocument.defaultView?.getComputedStyle(el);
          return {
            background: style?.backgroundColor,
            color: style?.color,
            border: style?.borderTopColor,
            text: el.textContent,
          };
        });
      const allow = await look(`${pending} button.allow`);
      const deny = await look(`${pending} button.deny`);
      expect(allow.text).toBe("✓ Allow");
      expect(deny.text).toBe("✗ Deny…");
      expect(allow.background).not.toBe(deny.background);
      expect(allow.color).not.toBe(deny.color);
      expect(allow.border).not.toBe(deny.border);
      expect(await page.textContent(`${pending} .approval-as`)).toBe("Your answer is recorded as alice.");
      await expectAccessible(page, "a session page with a pending approval");
      // docs/serve-viewer-approval.png is this picture; PODKIT_DOC_SCREENSHOTS=1 writes it again.
      const docShot = process.env.PODKIT_DOC_SCREENSHOTS === "1" ? DOCS : SHOTS;
      await page
        .locator(".turn:has(.approval)")
        .screenshot({ path: join(docShot, "serve-viewer-approval.png") });
      const ran = () => readFile(join(ws.workspace, "ran.txt"), "utf8").catch(() => "");
      expect(await ran()).toBe("");

      await page.click(`${pending} button.allow`);
      const call = ".tool:has(.approval[data-call-id='toolu_rotate'])";
      await page.waitForSelector(`${call} .tool-outcome`, { timeout: 60_000 });
      // In the order it happened: the request, its answer (credited to the token's holder), the result.
      const order = await page.$$eval(
        `${call} .approval, ${call} .approval-answer, ${call} .tool-outcome`,
        (els) => els.map((el) => el.classList[0]),
      );
      expect(order).toEqual(["approval", "approval-answer", "tool-outcome"]);
      expect(await page.textContent(`${call} .approval-answer`)).toMatch(/^✓ allowed by alice/);
      expect(await page.$$(`${call} button`)).toHaveLength(0);
      expect(await ran()).toBe("ran\n");
      const entries = await sessionEntries(ws.workspace, sessionId);
      const answered = entries.find((e) => e.kind === "approval_answered");
      expect(answered).toMatchObject({ call_id: "toolu_rotate", decision: "allow", by: "alice" });
      const kinds = entries.map((e) => e.kind);
      expect(kinds.indexOf("approval_requested")).toBeLessThan(kinds.indexOf("approval_answered"));
      expect(kinds.indexOf("approval_answered")).toBeLessThan(kinds.lastIndexOf("tool_result"));
      await page.waitForSelector(".entry-run_completed >> nth=2", { timeout: 60_000 });
      await expectAccessible(page, "a session page");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 240_000);

  it("with the keyboard alone: Ctrl+Enter starts a session, Tab reaches Allow and Deny, Deny asks for a reason in a dialog (Escape cancels, Ctrl+Enter denies), and the write shows its path and content", async () => {
    ws = await doubleWorkspace(gate.url);
    const manifest = join(ws.workspace, ".podkit", "manifest.toml");
    await writeFile(
      manifest,
      (await readFile(manifest, "utf8")).replace("bash = true", "bash = true\nconfirm_writes = true"),
    );
    double.enqueue(
      {
        parts: [
          {
            type: "tool_call",
            id: "toolu_plan",
            name: "write_file",
            arguments: { path: "notes/plan.md", content: PLAN },
          },
        ],
      },
      { parts: [{ type: "text", text: "Understood, I will wait." }] },
    );
    // Loopback without a token: anyone on this machine may answer, and the answer says so.
    const serve = await startServe(ws.workspace, env());
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/`);
      await page.waitForSelector("#list[data-live='true']");
      await tabTo(page, "#message");
      await page.keyboard.type("Write the plan down.");
      await page.keyboard.press("Control+Enter");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      const sessionId = sessionIdOf(page);

      const pending = ".approval.pending[data-call-id='toolu_plan']";
      await page.waitForSelector(pending, { timeout: 60_000 });
      expect(await page.textContent(`${pending} [data-arg='path']`)).toBe("notes/plan.md");
      expect(await page.textContent(`${pending} [data-arg='content']`)).toBe(PLAN);
      expect(await page.textContent(`${pending} .approval-as`)).toBe(
        "Your answer is recorded as anonymous (loopback, no token).",
      );
      await until("the approval is announced", async () =>
        ((await page.textContent("#announcer")) ?? "").startsWith(
          "Approval needed: write_file — notes/plan.md",
        ),
      );

      // Tab reaches Allow, then Deny; Space opens the reason dialog with the focus in its box.
      const passed = await tabTo(page, `${pending} button.deny`);
      expect(passed.at(-1)).toBe("button.allow");
      await page.keyboard.press("Space");
      await page.waitForSelector("#deny-dialog[open]");
      expect(await focused(page, "#deny-reason")).toBe(true);
      expect(await page.getByLabel("Reason (optional)").getAttribute("id")).toBe("deny-reason");
      await expectAccessible(page, "the deny dialog");
      // Escape cancels: nothing is sent, the focus is back on Deny.
      await page.keyboard.press("Escape");
      await page.waitForSelector("#deny-dialog", { state: "detached" });
      expect(await focused(page, `${pending} button.deny`)).toBe(true);
      expect(
        (await sessionEntries(ws.workspace, sessionId)).some((e) => e.kind === "approval_answered"),
      ).toBe(false);
      // Enter opens it again; the reason typed, Ctrl+Enter denies.
      await page.keyboard.press("Enter");
      await page.waitForSelector("#deny-dialog[open]");
      await page.keyboard.type(REASON);
      await page.keyboard.press("Control+Enter");
      const call = ".tool:has(.approval[data-call-id='toolu_plan'])";
      await page.waitForSelector(`${call} .approval-answer.denied`);
      expect(await page.textContent(`${call} .approval-answer`)).toMatch(
        new RegExp(`^✗ denied by anonymous \\(loopback, no token\\) · ${REASON}`),
      );
      // The keyboard user's focus stays on the answered request, not lost to the page.
      expect(await focused(page, `${call} .approval`)).toBe(true);
      await page.waitForSelector(`${call} .tool-outcome.failed`, { timeout: 60_000 });
      const order = await page.$$eval(`${call} .approval-answer, ${call} .tool-outcome`, (els) =>
        els.map((el) => el.classList[0]),
      );
      expect(order).toEqual(["approval-answer", "tool-outcome"]);
      const answered = (await sessionEntries(ws.workspace, sessionId)).find(
        (e) => e.kind === "approval_answered",
      );
      expect(answered).toMatchObject({
        decision: "deny",
        reason: REASON,
        by: "anonymous (loopback, no token)",
      });
      expect(existsSync(join(ws.workspace, "notes", "plan.md"))).toBe(false);
      await until("the model read the reason", async () =>
        JSON.stringify(double.requests.at(-1)?.body ?? "").includes("not before the release"),
      );

      // The message box of the session page: labelled, and Ctrl+Enter sends from it too.
      await page.waitForSelector(".entry-run_completed >> nth=1", { timeout: 60_000 });
      double.enqueue({ parts: [{ type: "text", text: "Noted." }] });
      await tabTo(page, "#message");
      await page.keyboard.type("Thanks.");
      await page.keyboard.press("Control+Enter");
      await page.waitForSelector(".user .text:text-is('Thanks.')");
      expect(await page.inputValue("#message")).toBe("");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 240_000);

  it("the session list refreshes live: sessions started elsewhere appear, and their status changes, without a reload", async () => {
    ws = await doubleWorkspace(gate.url);
    const serve = await startServe(ws.workspace, env());
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/`);
      await page.waitForSelector("#list[data-live='true']");
      expect(await page.textContent("#listing")).toBe("No sessions yet.");
      await expectAccessible(page, "the empty list page");
      // A mark a reload would wipe.
      await page.$eval("body", (body) => {
        body.dataset.sameDocument = "yes";
      });
      let navigations = 0;
      page.on("framenavigated", () => {
        navigations += 1;
      });

      // Through the API (another tab, a script): a session whose bash call waits for a person.
      double.enqueue({
        parts: [{ type: "tool_call", id: "toolu_ls", name: "bash", arguments: { command: "ls" } }],
      });
      const started = (await fetch(`${serve.url}/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "List the files." }),
      }).then((r) => r.json())) as { sessionId: string };
      const row = `#sessions tr[data-session-id='${started.sessionId}']`;
      await page.waitForSelector(`${row} .status[data-status='awaiting_approval']`, { timeout: 60_000 });
      expect(await page.textContent(`${row} .status`)).toBe("awaiting_approval · 1 waiting");

      double.enqueue({ parts: [{ type: "text", text: "Here they are." }] });
      const answered = await fetch(`${serve.url}/sessions/${started.sessionId}/approvals/toolu_ls`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "allow" }),
      });
      expect(answered.status).toBe(202);
      await page.waitForSelector(`${row} .status[data-status='finished']`, { timeout: 60_000 });

      // Another process on the same store: `podkit run` in a terminal.
      double.enqueue({ parts: [{ type: "text", text: "Hello from the terminal." }] });
      const run = await runBin(["run", "Say hello."], { cwd: ws.workspace, env: env(), timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      await until(
        "the terminal's session is listed",
        async () => (await page.$$("#sessions tbody tr")).length === 2,
      );
      // The row can appear from the session's first entry, before its input is written: the list
      // refreshes live, so the input shows up in the same row without a reload.
      await until(
        "the terminal's session shows its first input",
        async () =>
          (await page.$eval("#sessions tbody tr", (tr) => tr.querySelector(".first-input")?.textContent)) ===
          "Say hello.",
      );
      await page.waitForSelector("#sessions tbody tr >> nth=0 >> .status[data-status='finished']", {
        timeout: 60_000,
      });

      expect(navigations).toBe(0);
      expect(await page.$eval("body", (body) => body.dataset.sameDocument)).toBe("yes");
      await expectAccessible(page, "the list page");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 180_000);

  it("`podkit serve --help` and docs/cli.md say approval calls stay pending, not that they are denied", async () => {
    ws = await doubleWorkspace(gate.url);
    const help = await runBin(["serve", "--help"], { cwd: ws.workspace, env: env() });
    const text = help.stdout.replace(/\s+/g, " ");
    expect(text).toContain("stay pending unless --yes is given");
    expect(text).not.toMatch(/are denied/);
    const cli = await readFile(join(DOCS, "cli.md"), "utf8");
    const section = cli.slice(
      cli.indexOf("## `podkit serve`"),
      cli.indexOf("\n## ", cli.indexOf("## `podkit serve`") + 1),
    );
    expect(section.replace(/\s+/g, " ")).toContain("stay pending in the log");
    expect(section).not.toMatch(/are denied/);
  });
});
