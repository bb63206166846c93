import { createHash, randomUUID } from "node:crypto";
import nunjucks from "nunjucks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PromptCatalog } from "../src/catalog/prompt-catalog.js";
import { PodkitPodError } from "../src/errors.js";
import { PromptLoader } from "../src/prompt-ref/prompt-loader.js";
import type { SystemPromptContext } from "../src/system-prompt/system-prompt-context.js";
import { SystemPromptTemplate } from "../src/system-prompt/system-prompt-template.js";
import { collectWarnings, useTempDirs, writeFiles } from "./helpers.js";
import { PAYLOADS, type Payload } from "./ssti-payloads.js";

const SECRET = `ssti-secret-${randomUUID()}`;
const REQUIRE_PROOF = createHash("sha256").update("podkit").digest("hex");
const tempDir = useTempDirs();
const globals = globalThis as { __podkitSsti?: unknown };

let builtinCatalog: PromptCatalog;
beforeAll(async () => {
  process.env.PODKIT_SSTI_SECRET = SECRET;
  builtinCatalog = await PromptCatalog.loadBuiltinOnly();
});
afterAll(() => {
  delete process.env.PODKIT_SSTI_SECRET;
});
afterEach(() => {
  delete globals.__podkitSsti;
  delete (Object.prototype as { polluted?: unknown }).polluted;
});

function prototypeShapes(): string[] {
  return [Object.prototype, Array.prototype, String.prototype, Number.prototype, Function.prototype].map(
    (p) => Reflect.ownKeys(p).map(String).sort().join(","),
  );
}

/** A mutable, unfrozen system prompt context: the sandbox, not freezing, must protect it. */
function systemPromptData(): SystemPromptContext & Record<string, unknown> {
  return {
    date: "2026-04-15",
    time: "09:30:00",
    datetime: "2026-04-15T09:30:00Z",
    cwd: "/work/project",
    scope: {
      readable: ["/work/project"],
      writable: ["/work/project"],
      summary: "Readable:\n  - /work/project",
    },
    tools: ["alpha", "beta"],
    files: { agents_md: "agents" },
    language: "English",
    skills: { listing: "", entries: [], mode: "off" },
  };
}

const forSystemPrompt = (source: string) =>
  source.replaceAll("LIST", "tools").replaceAll("MAP", "scope").replaceAll("STR", "cwd");
const forPack = (source: string) =>
  source
    .replaceAll("LIST", "sections")
    .replaceAll("MAP", "sections[0]")
    .replaceAll("STR", "sections[0].text");

interface Outcome {
  text?: string;
  error?: unknown;
}

async function attempt(run: () => Promise<string>): Promise<Outcome> {
  try {
    return { text: await run() };
  } catch (error) {
    return { error };
  }
}

/** Everything a contained payload must not have achieved, whatever the outcome. */
function expectContained(outcome: Outcome, data: unknown, dataBefore: unknown, shapesBefore: string[]): void {
  if (outcome.error !== undefined) {
    // Refused with one of podkit's own errors (syntax, render, catalog), not an internal crash.
    expect(PodkitPodError.isInstance(outcome.error), String(outcome.error)).toBe(true);
  }
  const seen = [outcome.text ?? "", outcome.error instanceof Error ? outcome.error.message : ""].join("\n");
  expect(seen).not.toContain(SECRET);
  expect(seen).not.toContain(REQUIRE_PROOF);
  expect(seen).not.toMatch(/\[native code\]|function\s*\w*\s*\(|=>/);
  expect(globals.__podkitSsti).toBeUndefined();
  expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  expect(prototypeShapes()).toEqual(shapesBefore);
  expect(data).toEqual(dataBefore);
}

describe("SSTI payloads are contained", () => {
  it(`the suite has at least 25 payloads (${PAYLOADS.length})`, () => {
    expect(PAYLOADS.length).toBeGreaterThanOrEqual(25);
  });

  describe.each(PAYLOADS)("$name", (payload: Payload) => {
    it("in a system prompt template", async () => {
      const data = systemPromptData();
      const before = structuredClone(data);
      const shapes = prototypeShapes();
      const outcome = await attempt(async () =>
        SystemPromptTemplate.parse(forSystemPrompt(payload.source), PromptLoader.create({})).render(
          data,
          builtinCatalog,
        ),
      );
      expectContained(outcome, data, before, shapes);
    });

    it("in a workspace pack value", async () => {
      const workspace = await tempDir("ssti");
      await writeFiles(workspace, {
        ".podkit/prompts.toml": `[prompt]\ncontext_update_section = ${JSON.stringify(forPack(payload.source))}\n`,
      });
      const data = { sections: [{ id: "memory", text: "remember", summary: "S" }] };
      const before = structuredClone(data);
      const shapes = prototypeShapes();
      const { sink } = collectWarnings();
      const outcome = await attempt(async () => {
        const catalog = await PromptCatalog.load({ userConfigDir: null, workspace, onWarning: sink });
        return catalog.render("context_update_section", data);
      });
      expectContained(outcome, data, before, shapes);
    });

    it("in an included workspace file", async () => {
      const workspace = await tempDir("ssti");
      await writeFiles(workspace, { ".podkit/prompts/evil.md": forSystemPrompt(payload.source) });
      const data = systemPromptData();
      const before = structuredClone(data);
      const shapes = prototypeShapes();
      const outcome = await attempt(async () =>
        SystemPromptTemplate.parse(
          'Intro {% include "$workspace/evil" %} outro',
          PromptLoader.create({ workspace }),
        ).render(data, builtinCatalog),
      );
      expectContained(outcome, data, before, shapes);
    });
  });
});

// The payloads are real: the same text with the same data escapes stock nunjucks 3.2.4.
describe("the same payloads escape stock nunjucks 3.2.4", () => {
  const stock = new nunjucks.Environment(null, { autoescape: false });
  const escaping = PAYLOADS.filter((p) => p.stock !== null);

  it.each(escaping)("$name ($stock)", (payload: Payload) => {
    const data = systemPromptData();
    const before = structuredClone(data);
    let text = "";
    try {
      text = stock.renderString(forSystemPrompt(payload.source), data);
    } catch {
      // a payload may break stock rendering after it has done its damage
    }
    const observed = {
      secret: text.includes(SECRET),
      canary: globals.__podkitSsti === "pwned",
      require: text.includes(REQUIRE_PROOF),
      source: /\[native code\]|function\s*\w*\s*\(/.test(text),
      mutation:
        ({} as { polluted?: unknown }).polluted !== undefined ||
        JSON.stringify(data) !== JSON.stringify(before),
    };
    expect(observed[payload.stock as keyof typeof observed]).toBe(true);
  });
});
