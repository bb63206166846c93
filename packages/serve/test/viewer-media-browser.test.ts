import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Item } from "@podkit/llm-worker";
import { FsStore, sessionsRoot } from "@podkit/session-store";
import { startProviderDouble } from "@podkit/testkit";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noisePng } from "../../../test-support/media-files.js";
// The built server: the page's scripts are the compiled dist/viewer/ (the source has none).
import { startServer } from "../dist/index.js";
import { doublePods, scratchWorkspace } from "./support/serve-world.js";
import { http } from "./support/sse-client.js";

// The viewer shows a tool result's image (docs/serve.md, "The session viewer"), in a real browser
// (Debian's chromium, as the CLI's browser tests): fetched from the media route with the page's
// token, drawn from a blob: URL the page's CSP allows.

const CHROMIUM = "/usr/bin/chromium";
let browser: Browser;

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
});
afterAll(async () => {
  await browser?.close();
});

describe("the session viewer", () => {
  it("draws the image a tool result carries under the call's outcome", async () => {
    const { root, workspace } = await scratchWorkspace(`[[scope.allow]]\ntarget = ".."\npermission = "read"`);
    const double = await startProviderDouble({ wire: "anthropic" });
    const store = new FsStore<Item>({ root: sessionsRoot(workspace) });
    const server = await startServer({ store, pods: doublePods(workspace, double), port: 0 });
    const w = { double, url: (path: string) => `${server.url}${path}` };
    const context = await browser.newContext();
    try {
      await writeFile(join(workspace, "shot.png"), noisePng(64, 48, 3));
      w.double.enqueue(
        {
          parts: [{ type: "tool_call", name: "read_file", arguments: { path: "shot.png" }, id: "call_shot" }],
        },
        { parts: [{ type: "text", text: "A screenshot." }] },
      );
      const started = await http(w.url("/sessions"), { json: { message: "look", wait: true } });
      const { sessionId } = started.body as { sessionId: string };
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
      });
      await page.goto(w.url(`/#/sessions/${sessionId}`));
      const image = page.locator("img.media-image");
      await image.waitFor();
      // The decoded size, once the image has loaded (polled from here, as the CLI's browser tests do).
      const drawn = () =>
        image.evaluate((element) => {
          const img = element as unknown as {
            complete: boolean;
            naturalWidth: number;
            naturalHeight: number;
          };
          return img.complete ? [img.naturalWidth, img.naturalHeight] : [0, 0];
        });
      const deadline = Date.now() + 15_000;
      while ((await drawn())[0] === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(await drawn()).toEqual([64, 48]);
      expect(await image.getAttribute("alt")).toBe("image/png 64×48");
      expect(await image.getAttribute("src")).toMatch(/^blob:/);
      expect(blocked).toEqual([]);
    } finally {
      await context.close();
      await server.close();
      await store.close();
      await double.close();
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});
