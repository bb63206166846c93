import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import { type ProviderDouble, startProviderDouble } from "@podkit/testkit";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { entriesOf, openSse } from "../../serve/test/support/sse-client.js";
import { CHILD_BASH_CALL, enqueueDelegation, HELPER_ROLE } from "./support/helper-role.js";
import { startServe } from "./support/serve-process.js";
import { type StreamGate, startStreamGate } from "./support/stream-gate.js";
import { doubleWorkspace } from "./support/workspace.js";

// The session viewer of `podkit serve` in a real browser: Debian's chromium (/usr/bin/chromium,
// installed by .ci/run) driven by playwright-core, against a real `podkit serve` process whose
// pods talk to the provider double. One browser serves the whole file; each test gets a fresh
// context (its own storage), and every wait is on a condition, never a fixed time.

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

const DOCS = join(import.meta.dirname, "..", "..", "..", "docs");

/** A read-only reviewer role under a root whose writes ask for approval. */
const READ_ONLY_REVIEWER = `
[subpods.reviewer]
description = "reviews code, read-only"
max_depth = 1
[subpods.reviewer.worker]
system_prompt = "REVIEWER"
[[subpods.reviewer.scope.allow]]
target = "../src"
permission = "read"
`;

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

/** A scratch workspace whose pods talk to the double through the gate, with `README.md`. */
async function workspace(extra = ""): Promise<typeof ws> {
  ws = await doubleWorkspace(gate.url, extra);
  await writeFile(join(ws.workspace, "README.md"), "hello\n");
  return ws;
}

/** A page in a fresh context of the shared browser (its own cookies and session storage). */
async function openPage(): Promise<Page> {
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  return context.newPage();
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

/** Waits (bounded, polling the API) until session `sessionId`'s status is `status`. */
async function rootStatus(url: string, sessionId: string, status: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const rows = (await fetch(`${url}/sessions`).then((r) => r.json())) as {
      sessionId: string;
      status: string;
    }[];
    const now = rows.find((row) => row.sessionId === sessionId)?.status;
    if (now === status) return;
    if (Date.now() > deadline) throw new Error(`session ${sessionId} stayed ${now}, never ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
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
      // The answer streams a few words, then is held (by the gate) while the page reloads.
      { parts: [{ type: "text", text: ANSWER, chunkSize: 6 }] },
    );
    const answer = gate.hold(2, 8);
    await workspace();
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" }, ["--yes"]);
    try {
      const page = await openPage();
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
      await answer.held;
      await previewShows(page, "");
      const partial = await draftText(page);
      expect(ANSWER.startsWith(partial) && partial.length < ANSWER.length, partial).toBe(true);
      await page.waitForSelector(".entry-tool_result"); // the tool call's outcome, committed before

      await page.screenshot({ path: join(SHOTS, "session-streaming.png"), fullPage: true });

      // Reload mid-run: what was received is drawn again and the stream resumes after it.
      await page.reload();
      await page.waitForSelector("#session[data-live='true']");
      await previewShows(page, partial);
      answer.release();
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
    await workspace();
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openPage();
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
      await page.waitForSelector(".entry-run_completed >> nth=1", { timeout: 20_000 });
      expect(await page.textContent(".approval-answer.allowed")).toMatch(/allowed by \S+/);
      expect(await ran()).toBe("ran\n");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 120_000);
  it("draws the tree of sub-pods: the root's page marks itself, says the child waits and links to it; the list nests children", async () => {
    await workspace(HELPER_ROLE);
    enqueueDelegation(double);
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/`);
      await page.fill("#message", "Delegate the work.");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      const rootId = new URL(page.url()).hash.slice("#/sessions/".length);

      // The child waits, and so does the root (its spawn_pod call is suspended on the child's
      // approval): the tree, asked again after the last entries, shows it.
      await page.waitForSelector(".entry-run_completed");
      await page.waitForSelector("#tree-waiting .waiting");
      const nodes = await page.$$eval("#tree .tree-node", (els) =>
        els.map((el) => ({
          id: el.getAttribute("data-session-id"),
          role: el.querySelector(":scope > a .role")?.textContent,
          status: el.querySelector(":scope > .status")?.getAttribute("data-status"),
          current: el.classList.contains("current"),
          depth: (() => {
            let depth = 0;
            for (let up = el.parentElement; up !== null; up = up.parentElement)
              if (up.classList.contains("tree-node")) depth += 1;
            return depth;
          })(),
          href: el.querySelector(":scope > a")?.getAttribute("href"),
        })),
      );
      expect(nodes).toHaveLength(3);
      expect(nodes[0]).toMatchObject({
        id: rootId,
        role: "root",
        status: "awaiting_approval",
        current: true,
        depth: 0,
      });
      const [child, grandchild] = [nodes[1], nodes[2]];
      expect(child).toMatchObject({ role: "helper", status: "awaiting_approval", current: false, depth: 1 });
      expect(grandchild).toMatchObject({ role: "helper", status: "finished", current: false, depth: 2 });
      for (const node of nodes) expect(node.href).toBe(`#/sessions/${node.id}`);
      expect(await page.textContent("#tree .tree-node.current > a")).toContain("root");
      const waiting = await page.$eval("#tree-waiting .waiting", (el) => ({
        id: el.getAttribute("data-session-id"),
        text: el.textContent,
        href: el.querySelector("a")?.getAttribute("href"),
      }));
      expect(waiting).toEqual({
        id: child?.id,
        text: "helper waits for your approval of bash · open it",
        href: `#/sessions/${child?.id}`,
      });
      await page.screenshot({ path: join(SHOTS, "session-tree.png") });
      // docs/serve-viewer-tree.png is this picture; PODKIT_DOC_SCREENSHOTS=1 writes it again.
      const docShot = process.env.PODKIT_DOC_SCREENSHOTS === "1" ? DOCS : SHOTS;
      await page.locator("#session").screenshot({ path: join(docShot, "serve-viewer-tree.png") });

      // The link opens the child's page: its own stream, the pending call with Allow/Deny, the
      // same tree with the child marked.
      await page.click("#tree-waiting a");
      await page.waitForURL(new RegExp(`#/sessions/${child?.id}$`));
      await page.waitForSelector(`#session[data-session-id='${child?.id}']`);
      await page.waitForSelector(`.approval.pending[data-call-id='${CHILD_BASH_CALL}'] button.allow`);
      await page.waitForSelector(`#tree .tree-node.current[data-session-id='${child?.id}']`);
      expect(await page.$$("#tree-waiting")).toHaveLength(0); // the waiting session is this one
      // And the grandchild's link, from the tree.
      await page.click(`#tree .tree-node[data-session-id='${grandchild?.id}'] > a`);
      await page.waitForSelector(`#session[data-session-id='${grandchild?.id}'] .assistant`);
      expect(await page.textContent(".assistant .text")).toBe("the grandchild looked");

      // The list puts each child under its parent.
      await page.goto(`${serve.url}/#/`);
      await page.waitForSelector("#sessions");
      const rows = await page.$$eval("#sessions tbody tr", (els) =>
        els.map((el) => [el.getAttribute("data-session-id"), el.getAttribute("data-depth")]),
      );
      expect(rows).toEqual([
        [rootId, "0"],
        [child?.id, "1"],
        [grandchild?.id, "2"],
      ]);

      // Allow on the child's page: the one continuation resumes the root (the top of the waiting
      // chain), whose suspended spawn_pod continues the child: its bash runs once, the tree ends.
      double.enqueue({ parts: [{ type: "text", text: "root done" }] });
      await page.goto(`${serve.url}/#/sessions/${child?.id}`);
      await page.click(`.approval.pending[data-call-id='${CHILD_BASH_CALL}'] button.allow`);
      await page.waitForSelector(`.approval.allowed[data-call-id='${CHILD_BASH_CALL}']`);
      await rootStatus(serve.url, rootId, "finished");
      const childLog = (await fetch(`${serve.url}/sessions/${child?.id}`).then((r) => r.json())) as {
        segments: unknown;
      };
      expect(JSON.stringify(childLog.segments)).toContain("the helper waits for an approval");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 120_000);

  it("draws a turn's typed answer inside the turn: pretty JSON folded when long, the digest short, normalisations and repairs", async () => {
    await workspace('[output]\nschema = "verdict.schema.json"\n');
    const schema = {
      type: "object",
      properties: {
        verdict: { type: "string", enum: ["approve", "reject"] },
        findings: { type: "array", items: { type: "string" } },
      },
      required: ["verdict", "findings"],
    };
    await writeFile(join(ws.workspace, ".podkit", "verdict.schema.json"), JSON.stringify(schema));
    const findings = Array.from({ length: 20 }, (_, i) => `finding ${i + 1}`);
    double.enqueue(
      { parts: [{ type: "tool_call", name: "final_answer", arguments: { verdict: "maybe", findings: [] } }] },
      {
        parts: [
          {
            type: "tool_call",
            name: "final_answer",
            arguments: { answer: JSON.stringify({ verdict: "approve", findings }) },
          },
        ],
      },
    );
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/`);
      await page.fill("#message", "Review it.");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      await page.waitForSelector(".turn .typed-output", { timeout: 40_000 });
      const drawn = await page.$eval(".turn .typed-output", (el) => ({
        head: el.querySelector(".output-head")?.textContent ?? "",
        digest: el.getAttribute("data-schema-digest"),
        short: el.querySelector(".output-head code")?.textContent,
        folded: el.querySelector("details.output-fold")?.hasAttribute("open"),
        title: el.querySelector("details.output-fold > summary")?.textContent ?? "",
        value: el.querySelector("pre.output-value")?.textContent ?? "",
        turnHasIt: el.parentElement?.classList.contains("turn"),
      }));
      expect(drawn.turnHasIt).toBe(true);
      expect(drawn.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(drawn.short).toBe(drawn.digest?.slice("sha256:".length, "sha256:".length + 12));
      expect(drawn.head).toContain("unwrapped:answer, parsed_string");
      expect(drawn.head).toContain("1 repair");
      // Long: folded, its title the start of the answer on one line.
      expect(drawn.folded).toBe(false);
      const pretty = JSON.stringify({ verdict: "approve", findings }, null, 2);
      expect(drawn.title).toMatch(/^\{"verdict":"approve","findings":\["finding 1",.*… \((\d+) lines\)$/);
      expect(drawn.title).toContain(`(${pretty.split("\n").length} lines)`);
      expect(drawn.value).toBe(pretty);
      await page.click(".typed-output details.output-fold > summary");
      expect(await page.isVisible(".typed-output pre.output-value")).toBe(true);
      await page.screenshot({ path: join(SHOTS, "session-typed-answer.png"), fullPage: true });
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 120_000);

  it("Allow on a read-only child's write, from its page: the tree goes on, and the child still cannot write (the root, allowed the same way, does)", async () => {
    await workspace(READ_ONLY_REVIEWER);
    // The root's writes (and its children's) ask for approval: nobody is at a terminal to answer.
    const manifest = join(ws.workspace, ".podkit", "manifest.toml");
    await writeFile(
      manifest,
      (await readFile(manifest, "utf8")).replace("bash = true", "bash = true\nconfirm_writes = true"),
    );
    await mkdir(join(ws.workspace, "src"), { recursive: true });
    const written = () => existsSync(join(ws.workspace, "src", "owned.txt"));
    double.enqueue(
      { parts: [{ type: "tool_call", name: "spawn_pod", arguments: { role: "reviewer", task: "fix it" } }] },
      {
        parts: [
          {
            type: "tool_call",
            id: "toolu_child_write",
            name: "write_file",
            arguments: { path: "src/owned.txt", content: "x\n" },
          },
        ],
      },
    );
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/`);
      await page.fill("#message", "Fix it.");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      const rootId = new URL(page.url()).hash.slice("#/sessions/".length);
      await page.waitForSelector("#tree-waiting .waiting a", { timeout: 90_000 });
      await page.click("#tree-waiting a");
      double.enqueue(
        { parts: [{ type: "text", text: "could not write" }] },
        { parts: [{ type: "text", text: "root done" }] },
      );
      await page.click(".approval.pending[data-call-id='toolu_child_write'] button.allow", {
        timeout: 90_000,
      });
      await page.waitForSelector(".approval.allowed[data-call-id='toolu_child_write']", { timeout: 90_000 });
      await rootStatus(serve.url, rootId, "finished");
      expect(written()).toBe(false);

      // Positive control: the root's own write, allowed from its page, writes.
      double.enqueue(
        {
          parts: [
            {
              type: "tool_call",
              id: "toolu_root_write",
              name: "write_file",
              arguments: { path: "src/owned.txt", content: "x\n" },
            },
          ],
        },
        { parts: [{ type: "text", text: "wrote it" }] },
      );
      await page.goto(`${serve.url}/#/sessions/${rootId}`);
      // The page has switched to the root's session (a hash change renders it anew) before sending.
      await page.waitForSelector(`#session[data-session-id='${rootId}']`, { timeout: 90_000 });
      await page.fill("#message", "Write it yourself.");
      await page.click("#send");
      await page.click(".approval.pending[data-call-id='toolu_root_write'] button.allow", {
        timeout: 90_000,
      });
      await page.waitForSelector(".approval.allowed[data-call-id='toolu_root_write']", { timeout: 90_000 });
      await rootStatus(serve.url, rootId, "finished");
      expect(written()).toBe(true);
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 300_000);

  it('rewinds from a turn\'s "Rewind to here": the dry run lists the files, an outside edit needs force, and the confirmed rewind restores them and redraws the session', async () => {
    const write = (path: string, content: string) => ({
      parts: [{ type: "tool_call" as const, name: "write_file", arguments: { path, content } }],
    });
    double.enqueue(
      write("notes.txt", "first\n"),
      { parts: [{ type: "text", text: "Wrote the notes." }] },
      write("notes.txt", "second\n"),
      write("extra.txt", "extra\n"),
      { parts: [{ type: "text", text: "Changed them." }] },
    );
    await workspace();
    const file = (name: string) => readFile(join(ws.workspace, name), "utf8").catch(() => undefined);
    const serve = await startServe(ws.workspace, { HOME: ws.home, ANTHROPIC_API_KEY: "test-key" });
    try {
      const page = await openPage();
      await page.goto(`${serve.url}/`);
      await page.fill("#message", "Write the notes.");
      await page.click("#send");
      await page.waitForURL(/#\/sessions\/[0-9a-f-]{36}$/);
      await page.waitForSelector(".entry-run_completed");
      await page.fill("#message", "Change them.");
      await page.click("#send");
      await page.waitForSelector(".entry-run_completed >> nth=1");
      expect(await file("notes.txt")).toBe("second\n");
      expect(await page.$$eval("button.rewind", (els) => els.map((el) => el.textContent))).toEqual([
        "↶ Rewind to here (turn 1)",
        "↶ Rewind to here (turn 2)",
      ]);

      // The dry run: what would change, nothing changed yet; Escape cancels, the focus comes back.
      await page.click("button.rewind[data-turn='1']");
      await page.waitForSelector("#rewind-dialog #rewind-files li");
      const listed = () =>
        page.$$eval("#rewind-files li", (els) =>
          els.map((el) => [el.getAttribute("data-action"), el.getAttribute("data-path")]),
        );
      expect(await listed()).toEqual([
        ["delete", "extra.txt"],
        ["write", "notes.txt"],
      ]);
      expect(await page.textContent("#rewind-status")).toMatch(/restore 1 file and remove 1 file/);
      expect(await file("notes.txt")).toBe("second\n");
      expect(await dialogFocus(page)).toBe("rewind-confirm");
      await expectAccessible(page, "the rewind dialog");
      await page.keyboard.press("Escape");
      await page.waitForSelector("#rewind-dialog", { state: "detached" });
      expect(await dialogFocus(page)).toBe("turn 1");
      expect(await file("extra.txt")).toBe("extra\n");

      // Someone edits a file meanwhile: the dialog names it, and the rewind waits for "force".
      await writeFile(join(ws.workspace, "notes.txt"), "my own edit\n");
      await page.click("button.rewind[data-turn='1']");
      await page.waitForSelector("#rewind-refused-files li[data-path='notes.txt']");
      expect(await page.isDisabled("#rewind-confirm")).toBe(true);
      expect(await dialogFocus(page)).toBe("rewind-force");
      await expectAccessible(page, "the rewind dialog asking for force");
      await page.screenshot({ path: join(SHOTS, "session-rewind-dialog.png") });
      await page.check("#rewind-force");
      await page.click("#rewind-confirm");
      await page.waitForSelector("#rewind-dialog", { state: "detached" });

      // Done: the files are back as turn 1 left them, and the page is drawn again from the log:
      // turn 2 is left behind, the fork continues after turn 1, and the message box has the focus.
      expect(await file("notes.txt")).toBe("first\n");
      expect(await file("extra.txt")).toBeUndefined();
      await page.waitForSelector(".boundary:has-text('Continues in a fork')");
      await page.waitForSelector(".turn.left-behind[data-turn='2']");
      // The redraw goes on as the log streams in: wait for turn 1's button rather than read at once.
      await page.waitForSelector("button.rewind[data-turn='1']");
      expect(
        await page.$$eval("button.rewind", (els) => els.map((el) => el.getAttribute("data-turn"))),
      ).toEqual(["1"]);
      expect(await page.textContent(".rewound")).toMatch(/rewound to turn 1 · the conversation continues/);
      expect(await dialogFocus(page)).toBe("message");
      await page.screenshot({ path: join(SHOTS, "session-rewound.png"), fullPage: true });

      // The next message continues from turn 1.
      double.enqueue({ parts: [{ type: "text", text: "Back at turn one." }] });
      await page.fill("#message", "Where are we?");
      await page.click("#send");
      await page.waitForSelector(".assistant:has-text('Back at turn one.')");
      const inputs = JSON.stringify(double.requests.at(-1)?.body.messages);
      expect(inputs).toContain("Write the notes.");
      expect(inputs).not.toContain("Change them.");
      expect(serve.stderr()).not.toContain("internal error");
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  }, 120_000);
});

/** What has the focus: an element's id, or a rewind button's turn ("turn 1"). */
const dialogFocus = (page: Page) =>
  page.$eval("body", (body) => {
    const active = body.ownerDocument.activeElement;
    const turn = active?.getAttribute("data-turn");
    return turn === null || turn === undefined ? (active?.id ?? "") : `turn ${turn}`;
  });

/** Fails on any axe-core violation of impact "serious" or "critical", naming rule and elements. */
async function expectAccessible(page: Page, where: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad, `accessibility of ${where}`).toEqual([]);
}
